#pragma once

#include <QWidget>
#include <memory>

class QComboBox;
class QDoubleSpinBox;
class QLabel;

namespace spark {

struct QuantPlan;

/// @brief The plan's bottom line: size before → after, the memory handed back to the KV cache, and
/// core's timing prediction (drafter-time saving, decode speedup) from inputs the user can edit: a
/// measured drafter step, a measured decode cycle, or a device preset's bandwidth. States the model's
/// assumption in words, so a number is never shown without what it rests on.
class SummaryBar : public QWidget
{
    Q_OBJECT

  public:
    explicit SummaryBar(QWidget* parent = nullptr);

    void setPlan(std::shared_ptr<const QuantPlan> plan);

    /// @brief The size line ("12.0 MiB → 4.1 MiB …"), for tests and screenshots.
    QString sizeText() const;
    /// @brief The prediction line, empty when there is nothing to predict.
    QString timingText() const;

    QDoubleSpinBox* drafterMsInput() const { return m_drafterMs; }
    QDoubleSpinBox* cycleMsInput() const { return m_cycleMs; }
    QComboBox* deviceInput() const { return m_device; }

  private:
    void update();

    std::shared_ptr<const QuantPlan> m_plan;
    QLabel* m_size;
    QLabel* m_timing;
    QLabel* m_assumption;
    QDoubleSpinBox* m_drafterMs;
    QDoubleSpinBox* m_cycleMs;
    QComboBox* m_device;
};

} // namespace spark
