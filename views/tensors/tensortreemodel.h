#pragma once

#include "views/tensors/tensoritemmodel.h"

#include <vector>

namespace spark {

/// @brief Tensors grouped layer → module → tensor ("layers.3" → "mlp.down_proj" → "weight"). Groups and
/// modules show the sums of their tensors; a module shows the analysis of its weight, the tensor a plan
/// decides about; a group shows its worst error (the largest rel. and max error below it), so that
/// sorting by error ranks the layers too. The node table is built once per snapshot; data() only looks
/// values up.
class TensorTreeModel : public TensorItemModel
{
    Q_OBJECT

  public:
    explicit TensorTreeModel(QObject* parent = nullptr);

    void resetData(std::shared_ptr<const DocumentSnapshot> snapshot,
                   std::shared_ptr<const AnalysisTable> analysis) override;
    /// @brief Also announces the modules whose weight is among @p rows.
    void updateAnalysis(std::shared_ptr<const AnalysisTable> analysis, const QList<int>& rows) override;
    QModelIndex indexOfTensor(const QString& name) const override;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

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
