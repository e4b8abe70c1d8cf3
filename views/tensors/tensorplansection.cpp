#include "views/tensors/tensorplansection.h"

#include "core/plan/quantplan.h"
#include "views/plan/plancontroller.h"
#include "views/shared/formatting.h"

#include <QFormLayout>
#include <QLabel>
#include <algorithm>

namespace spark {

TensorPlanSection::TensorPlanSection(PlanController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller)
{
    auto makeLabel = [this] {
        auto* label = new QLabel(this);
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        return label;
    };
    m_vllmName = makeLabel();
    m_decision = makeLabel();
    m_lint = makeLabel();
    m_lint->setTextFormat(Qt::RichText);
    auto* form = new QFormLayout(this);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("vLLM name"), m_vllmName);
    form->addRow(tr("Decision"), m_decision);
    form->addRow(tr("Lint"), m_lint);
    connect(m_controller, &PlanController::planChanged, this, &TensorPlanSection::update);
    update();
}

void TensorPlanSection::setTensor(const QString& tensor)
{
    m_tensor = tensor;
    update();
}

QString TensorPlanSection::vllmNameText() const
{
    return m_vllmName->text();
}

QString TensorPlanSection::decisionText() const
{
    return m_decision->text();
}

QString TensorPlanSection::lintText() const
{
    return m_lint->text();
}

void TensorPlanSection::update()
{
    const auto plan = m_controller->plan();
    const PlannedModule* module = nullptr;
    if (plan && !m_tensor.isEmpty()) {
        const std::string name = m_tensor.toStdString();
        for (const auto& m : plan->modules) {
            if (std::find(m.tensors.begin(), m.tensors.end(), name) != m.tensors.end()) {
                module = &m;
                break;
            }
        }
    }
    if (!module) {
        m_vllmName->setText(tr("—"));
        m_decision->setText(plan ? tr("not part of a module") : tr("no plan"));
        m_lint->clear();
        return;
    }
    m_vllmName->setText(QString::fromStdString(module->vllmName));
    m_vllmName->setToolTip(module->fusedGroup.empty()
                               ? QString()
                               : tr("Fused by vLLM into %1 (shard name %2).")
                                     .arg(QString::fromStdString(module->fusedGroup),
                                          QString::fromStdString(module->vllmShardName)));
    const QString decision =
        module->decision == PlanDecision::Quantize ? schemeText(*module->scheme) : tr("keep");
    m_decision->setText(tr("%1 — %2").arg(decision, QString::fromStdString(module->reason)));
    QStringList findings;
    for (const auto& f : plan->lint) {
        if (std::find(f.modules.begin(), f.modules.end(), module->name) == f.modules.end()) {
            continue;
        }
        const QString sev = QString::fromLatin1(severityName(f.severity).data(),
                                                static_cast<qsizetype>(severityName(f.severity).size()));
        findings.append(tr("<b>%1</b> %2: %3")
                            .arg(sev.toHtmlEscaped(), QString::fromStdString(f.id).toHtmlEscaped(),
                                 QString::fromStdString(f.message).toHtmlEscaped()));
    }
    m_lint->setText(findings.isEmpty() ? tr("none") : findings.join(QStringLiteral("<br>")));
}

} // namespace spark
