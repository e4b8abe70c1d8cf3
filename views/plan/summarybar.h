#pragma once

#include <QWidget>
#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QTableWidget;
class QToolButton;

namespace spark {

class ElidingLabel;
struct BenchReport;
struct QuantPlan;

/// @brief The plan's bottom line as a compact table: per scheme the modules and bytes before → after, the
/// checkpoint's total with the memory handed back to the KV cache, and core's timing prediction
/// (drafter-time saving, decode speedup) from inputs the user can edit: a measured drafter step, a measured
/// decode cycle, or a device preset's bandwidth. What the timing rests on (its basis and the model's
/// assumption) is stated in words below the table, so a number is never shown without it.
/// With benchmarks of the unquantized draft it also predicts decode tok/s and the best k for the plan
/// (core's speed model), whose conditions are the predictions' tooltip.
class SummaryBar : public QWidget
{
    Q_OBJECT

  public:
    enum Column : int { Label, Modules, Before, After, Change, ColumnCount };

    explicit SummaryBar(QWidget* parent = nullptr);

    void setPlan(std::shared_ptr<const QuantPlan> plan);
    /// @brief The benchmarks of the unquantized draft (the report's baseline arm); null: none loaded.
    void setBenchmarks(std::shared_ptr<const BenchReport> report);

    /// @brief The sizes in one line ("Size 12.0 MiB → 4.1 MiB …"), for tests; the table shows the same
    /// numbers.
    QString sizeText() const;
    /// @brief The prediction in one line, empty when there is nothing to predict.
    QString timingText() const;
    /// @brief The predicted decode tok/s and k* of the plan, empty without benchmarks.
    QString speedText() const;

    /// @brief The table: a row per scheme, then "Checkpoint", "KV cache", "Drafter step" and (with a
    /// cycle time) "Decode cycle"; every cell's tooltip says what its row counts.
    QTableWidget* table() const { return m_table; }
    QDoubleSpinBox* drafterMsInput() const { return m_drafterMs; }
    QDoubleSpinBox* cycleMsInput() const { return m_cycleMs; }
    QComboBox* deviceInput() const { return m_device; }

  private:
    void update();
    void addRow(const QStringList& cells, const QString& toolTip = {}, bool bold = false);
    void fitTableToContents();

    std::shared_ptr<const QuantPlan> m_plan;
    std::shared_ptr<const BenchReport> m_benchmarks;
    QString m_sizeText;
    QString m_timingText;
    QTableWidget* m_table;
    ElidingLabel* m_speed;
    ElidingLabel* m_basis; ///< what the drafter step rests on, always shown
    QLabel* m_assumption;  ///< the timing model's assumptions, shown on demand
    QToolButton* m_assumptionToggle;
    QDoubleSpinBox* m_drafterMs;
    QDoubleSpinBox* m_cycleMs;
    QComboBox* m_device;
};

} // namespace spark
