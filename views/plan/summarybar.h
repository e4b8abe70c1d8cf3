#pragma once

#include <QWidget>
#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace spark {

struct BenchReport;
struct QuantPlan;

/// @brief The plan's bottom line: size before → after, the memory handed back to the KV cache, and
/// core's timing prediction (drafter-time saving, decode speedup) from inputs the user can edit: a
/// measured drafter step, a measured decode cycle, or a device preset's bandwidth. States the model's
/// assumption in words, so a number is never shown without what it rests on. With benchmarks of the
/// unquantized draft it also predicts decode tok/s and the best k for the plan (core's speed model),
/// whose conditions are the predictions' tooltip.
class SummaryBar : public QWidget
{
    Q_OBJECT

  public:
    explicit SummaryBar(QWidget* parent = nullptr);

    void setPlan(std::shared_ptr<const QuantPlan> plan);
    /// @brief The benchmarks of the unquantized draft (the report's baseline arm); null: none loaded.
    void setBenchmarks(std::shared_ptr<const BenchReport> report);

    /// @brief The size line ("12.0 MiB → 4.1 MiB …"), for tests and screenshots.
    QString sizeText() const;
    /// @brief The prediction line, empty when there is nothing to predict.
    QString timingText() const;
    /// @brief The predicted decode tok/s and k* of the plan, empty without benchmarks.
    QString speedText() const;

    QDoubleSpinBox* drafterMsInput() const { return m_drafterMs; }
    QDoubleSpinBox* cycleMsInput() const { return m_cycleMs; }
    QComboBox* deviceInput() const { return m_device; }

  private:
    void update();

    std::shared_ptr<const QuantPlan> m_plan;
    std::shared_ptr<const BenchReport> m_benchmarks;
    QLabel* m_size;
    QLabel* m_timing;
    QLabel* m_speed;
    QLabel* m_assumption;
    QDoubleSpinBox* m_drafterMs;
    QDoubleSpinBox* m_cycleMs;
    QComboBox* m_device;
};

} // namespace spark
