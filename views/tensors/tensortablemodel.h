#pragma once

#include "views/document/documentsnapshot.h"
#include "views/tensors/tensorrowresult.h"

#include <QAbstractTableModel>
#include <memory>

namespace spark {

/// @brief The flat tensor list: one row per tensor, in snapshot order. A thin view over an immutable
/// snapshot and analysis table; it never copies or computes tensor data.
class TensorTableModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    explicit TensorTableModel(QObject* parent = nullptr);

    /// @brief Shows @p snapshot (null: nothing) with @p analysis (null or indexed like its rows).
    void resetData(std::shared_ptr<const DocumentSnapshot> snapshot,
                   std::shared_ptr<const AnalysisTable> analysis);
    /// @brief Swaps in a newer analysis table and announces the analysis columns of @p rows as changed.
    void updateAnalysis(std::shared_ptr<const AnalysisTable> analysis, const QList<int>& rows);

    /// @brief The index (column 0) of tensor @p name, or an invalid index.
    QModelIndex indexOfTensor(const QString& name) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    /// @brief Toggling a decision checkbox only asks (decisionToggleRequested): the plan decides, and its
    /// new decisions come back through updateAnalysis().
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

  Q_SIGNALS:
    /// The user toggled the decision checkbox of @p module ("layers.0.mlp.down_proj").
    void decisionToggleRequested(const QString& module);
    /// A scheme was picked in the Decision column's chooser (a scheme name, "BF16" to keep).
    void schemeChangeRequested(const QString& module, const QString& scheme);

  private:
    const TensorRowResult* analysisOf(int row) const;

    std::shared_ptr<const DocumentSnapshot> m_snapshot;
    std::shared_ptr<const AnalysisTable> m_analysis;
};

} // namespace spark
