#pragma once

#include "views/document/documentsnapshot.h"
#include "views/tensors/tensorrowresult.h"

#include <QAbstractItemModel>
#include <memory>

namespace spark {

/// @brief What the Tensors tab asks of its two models, the flat list and the layer → module → tensor
/// tree: the same data, the same columns and the same requests, so the view switches between them without
/// knowing which one it shows. Both are thin views over an immutable snapshot and analysis table.
class TensorItemModel : public QAbstractItemModel
{
    Q_OBJECT

  public:
    using QAbstractItemModel::QAbstractItemModel;

    /// @brief Shows @p snapshot (null: nothing) with @p analysis (null or indexed like its rows).
    virtual void resetData(std::shared_ptr<const DocumentSnapshot> snapshot,
                           std::shared_ptr<const AnalysisTable> analysis) = 0;
    /// @brief Swaps in a newer analysis table and announces the analysis columns of the tensors in @p rows
    /// (and of whatever shows them) as changed.
    virtual void updateAnalysis(std::shared_ptr<const AnalysisTable> analysis, const QList<int>& rows) = 0;
    /// @brief The index (column 0) of tensor @p name, or an invalid index.
    virtual QModelIndex indexOfTensor(const QString& name) const = 0;

  Q_SIGNALS:
    /// The user toggled the decision checkbox of @p module ("layers.0.mlp.down_proj"). Toggling only asks:
    /// the plan decides, and its new decisions come back through updateAnalysis().
    void decisionToggleRequested(const QString& module);
    /// A scheme was picked in the Decision column's chooser (a scheme name, "BF16" to keep).
    void schemeChangeRequested(const QString& module, const QString& scheme);
};

} // namespace spark
