#pragma once

#include "views/tensors/tensoritemmodel.h"

namespace spark {

/// @brief The flat tensor list: one row per tensor, in snapshot order. It never copies or computes tensor
/// data.
class TensorTableModel : public TensorItemModel
{
    Q_OBJECT

  public:
    explicit TensorTableModel(QObject* parent = nullptr);

    void resetData(std::shared_ptr<const DocumentSnapshot> snapshot,
                   std::shared_ptr<const AnalysisTable> analysis) override;
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
    const TensorRowResult* analysisOf(int row) const;

    std::shared_ptr<const DocumentSnapshot> m_snapshot;
    std::shared_ptr<const AnalysisTable> m_analysis;
};

} // namespace spark
