#pragma once

#include "core/bench/benchreport.h"

#include <QAbstractTableModel>
#include <memory>

namespace spark {

/// @brief The Benchmarks tab's table: one row per BenchReport cell (arm × prompt length) with the decode
/// statistics, the Welch comparison against the baseline arm and the acceptance figures. A thin view over
/// an immutable report: resetData() swaps it whole.
class BenchTableModel : public QAbstractTableModel
{
    Q_OBJECT

  public:
    enum Column {
        Arm,
        PromptLen,
        Count,
        Mean,
        Sd,
        Median,
        Cv,
        DeltaPercent,
        Ci,
        P,
        Sigma,
        AcceptanceRate,
        AcceptanceLength,
        ColumnCount
    };

    enum Role {
        /// The number behind a cell (double; NaN where there is none), for sorting numbers as numbers.
        SortRole = Qt::UserRole,
        /// True on the rows of the baseline arm.
        BaselineRole,
    };

    explicit BenchTableModel(QObject* parent = nullptr);

    /// @brief Shows @p report (null: empty table).
    void resetData(std::shared_ptr<const BenchReport> report);
    const BenchReport* report() const { return m_report.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

  private:
    QVariant display(const BenchCell& cell, const BenchComparison* comparison, int column) const;
    static double number(const BenchCell& cell, const BenchComparison* comparison, int column);

    std::shared_ptr<const BenchReport> m_report;
};

} // namespace spark
