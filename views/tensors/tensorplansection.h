#pragma once

#include <QWidget>

class QLabel;

namespace spark {

class PlanController;

/// @brief The detail panel's "Plan" section for the current tensor: its module's vLLM name, the plan's
/// decision with the reason, and the lint findings that concern the module.
class TensorPlanSection : public QWidget
{
    Q_OBJECT

  public:
    explicit TensorPlanSection(PlanController* controller, QWidget* parent = nullptr);

    void setTensor(const QString& tensor);

    QString vllmNameText() const;
    QString decisionText() const;
    QString lintText() const;

  private:
    void update();

    PlanController* m_controller;
    QString m_tensor;
    QLabel* m_vllmName;
    QLabel* m_decision;
    QLabel* m_lint;
};

} // namespace spark
