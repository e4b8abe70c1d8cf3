#pragma once

#include "core/forward/acceptance.h"

#include <QAbstractTableModel>

namespace spark {

/// @brief One row per draft position of an acceptance run: a_i of the BF16 and the quantized draft with
/// their 95% intervals, the paired change with its interval, the flip rate, the lower bound and the mean
/// KL(B‖Q). A thin view over a summary it copies (resetData); the quantized columns read "—" for an
/// unpaired run. ValueRole gives each cell's number (the point estimate) for sorting and tests.
class AcceptancePositionModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column { Position, AcceptBase, AcceptQuant, Delta, FlipRate, Bound, MeanKl, ColumnCount };
    enum Role { ValueRole = Qt::UserRole + 1 };

    explicit AcceptancePositionModel(QObject* parent = nullptr);

    /// @brief Shows @p summary (a copy; the model owns no other data).
    void resetData(const AcceptanceSummary& summary);
    void clear();
    const AcceptanceSummary& summary() const { return m_summary; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  private:
    AcceptanceSummary m_summary;
};

} // namespace spark
