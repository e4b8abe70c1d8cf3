#pragma once

#include "views/document/documentsnapshot.h"
#include "views/tensors/tensorrowresult.h"

#include <QAbstractItemModel>
#include <memory>
#include <vector>

namespace spark {

/// @brief Tensors grouped layer → module → tensor ("layers.3" → "mlp.down_proj" → "weight"). Groups and
/// modules show the sums of their tensors; a module shows the analysis of its weight, the tensor a plan
/// decides about; a group shows its worst error (the largest rel. and max error below it), so that
/// sorting by error ranks the layers too. The node table is built once per snapshot; data() only looks
/// values up.
class TensorTreeModel : public QAbstractItemModel
{
    Q_OBJECT

  public:
    explicit TensorTreeModel(QObject* parent = nullptr);

    void resetData(std::shared_ptr<const DocumentSnapshot> snapshot,
                   std::shared_ptr<const AnalysisTable> analysis);
    /// @brief Swaps in a newer analysis table; emits dataChanged for the analysis columns of the tensors in
    /// @p rows and of the modules whose weight is among them.
    void updateAnalysis(std::shared_ptr<const AnalysisTable> analysis, const QList<int>& rows);

    /// @brief The index (column 0) of tensor @p name, or an invalid index.
    QModelIndex indexOfTensor(const QString& name) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
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
    struct Node
    {
        int kind = 0;    ///< TensorColumns::NodeKind
        int parent = -1; ///< node index; -1 for top-level groups
        int rowInParent = 0;
        std::vector<int> children;
        QString label;      ///< shown in the name column
        QString fullName;   ///< group, module or tensor name
        int tensorRow = -1; ///< tensor: its snapshot row; module: the row of its weight (or first tensor)
        std::uint64_t params = 0;
        std::uint64_t bytes = 0;
        double share = 0.0;
        QString dtype; ///< common dtype of the tensors below, empty when mixed
        /// Groups: the largest errors of the tensors below (relError, maxError), none before analysis.
        TensorRowResult worst;
    };

    void build();
    /// Recomputes the worst errors of group node @p group. @return true when they changed.
    bool updateWorst(int group);
    const Node* nodeOf(const QModelIndex& index) const;
    const TensorRowResult* analysisOf(int tensorRow) const;
    QModelIndex indexOfNode(int node, int column) const;
    QVariant nodeData(const Node& node, int column, int role) const;

    std::shared_ptr<const DocumentSnapshot> m_snapshot;
    std::shared_ptr<const AnalysisTable> m_analysis;
    std::vector<Node> m_nodes;
    std::vector<int> m_topLevel;
    std::vector<int> m_nodeOfTensor; ///< snapshot row → tensor node
};

} // namespace spark
