#pragma once

#include "views/tensors/tensorselection.h"

#include <QWidget>

class QLabel;

namespace spark {

class PlanController;
struct QuantPlan;

/// @brief The detail panel's "Plan" section for the current tensor or module: the module's vLLM name, the
/// plan's decision with the reason, and the lint findings that concern the module. For a layer: the
/// decisions of its modules and the findings that concern any of them.
class TensorPlanSection : public QWidget
{
    Q_OBJECT

  public:
    explicit TensorPlanSection(PlanController* controller, QWidget* parent = nullptr);

    void setSelection(const TensorSelection& selection);
    /// @brief Shows the module of tensor @p tensor (empty: nothing).
    void setTensor(const QString& tensor);

    QString vllmNameText() const;
    QString decisionText() const;
    QString lintText() const;

  private:
    void update();
    void showGroup(const QuantPlan& plan);

    PlanController* m_controller;
    TensorSelection m_selection;
    QLabel* m_vllmName;
    QLabel* m_decision;
    QLabel* m_lint;
};

} // namespace spark
