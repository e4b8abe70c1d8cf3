#pragma once

#include <QWidget>
#include <memory>

class QLabel;
class QTableWidget;

namespace spark {

struct SweepResult;

/// @brief The detail panel's "Sensitivity sweep" section for the current tensor: the decision unit it belongs
/// to (a fused set counts as one) and, per legal candidate scheme, the unit's rel. error, checkpoint bytes
/// and bytes streamed per draft step, from the last sweep.
class TensorSweepSection : public QWidget
{
    Q_OBJECT

  public:
    explicit TensorSweepSection(QWidget* parent = nullptr);

    void setSweep(std::shared_ptr<const SweepResult> sweep);
    void setTensor(const QString& tensor);

    QTableWidget* table() const { return m_table; }
    QString unitText() const;

  private:
    void update();

    std::shared_ptr<const SweepResult> m_sweep;
    QString m_tensor;
    QLabel* m_unit;
    QTableWidget* m_table;
};

} // namespace spark
