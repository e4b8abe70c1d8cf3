#include "views/tensors/tensorplansection.h"

#include "core/plan/quantplan.h"
#include "views/plan/plancontroller.h"
#include "views/shared/formatting.h"

#include <QFormLayout>
#include <QHash>
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

void TensorPlanSection::setSelection(const TensorSelection& selection)
{
    m_selection = selection;
    update();
}

void TensorPlanSection::setTensor(const QString& tensor)
{
    setSelection(tensor.isEmpty() ? TensorSelection{}
                                  : TensorSelection{TensorSelection::Tensor, tensor, tensor});
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

namespace {

QString severityText(const LintFinding& finding)
{
    const auto name = severityName(finding.severity);
    return QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size()));
}

QString findingHtml(const LintFinding& f)
{
    return TensorPlanSection::tr("<b>%1</b> %2: %3")
        .arg(severityText(f).toHtmlEscaped(), QString::fromStdString(f.id).toHtmlEscaped(),
             QString::fromStdString(f.message).toHtmlEscaped());
}

} // namespace

void TensorPlanSection::showGroup(const QuantPlan& plan)
{
    const std::string group = m_selection.name.toStdString();
    const std::string prefix = group + ".";
    std::vector<const PlannedModule*> modules;
    for (const auto& m : plan.modules) {
        if (m.name == group || m.name.starts_with(prefix)) {
            modules.push_back(&m);
        }
    }
    m_vllmName->setText(tr("—"));
    m_vllmName->setToolTip({});
    if (modules.empty()) {
        m_decision->setText(tr("not part of a module"));
        m_lint->clear();
        return;
    }
    // "8 × W4A16, 3 kept": what the plan does with the layer at a glance.
    QStringList schemes;
    QHash<QString, int> counts;
    int kept = 0;
    for (const auto* m : modules) {
        if (m->decision != PlanDecision::Quantize) {
            ++kept;
            continue;
        }
        const QString scheme = schemeText(*m->scheme);
        if (!counts.contains(scheme)) {
            schemes.append(scheme);
        }
        ++counts[scheme];
    }
    QStringList parts;
    for (const auto& scheme : schemes) {
        parts.append(tr("%1 × %2").arg(counts.value(scheme)).arg(scheme));
    }
    if (kept > 0) {
        parts.append(tr("%n kept", nullptr, kept));
    }
    m_decision->setText(tr("%n module(s): %1", nullptr, static_cast<int>(modules.size()))
                            .arg(parts.join(QStringLiteral(", "))));
    QStringList findings;
    for (const auto& f : plan.lint) {
        const bool concerns = std::any_of(modules.begin(), modules.end(), [&f](const PlannedModule* m) {
            return std::find(f.modules.begin(), f.modules.end(), m->name) != f.modules.end();
        });
        if (concerns) {
            findings.append(findingHtml(f));
        }
    }
    m_lint->setText(findings.isEmpty() ? tr("none") : findings.join(QStringLiteral("<br>")));
}

void TensorPlanSection::update()
{
    const auto plan = m_controller->plan();
    if (plan && m_selection.kind == TensorSelection::Group) {
        showGroup(*plan);
        return;
    }
    const PlannedModule* module = nullptr;
    if (plan && m_selection.kind == TensorSelection::Module) {
        module = plan->findModule(m_selection.name.toStdString());
    } else if (plan && !m_selection.tensor.isEmpty()) {
        const std::string name = m_selection.tensor.toStdString();
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
        findings.append(findingHtml(f));
    }
    m_lint->setText(findings.isEmpty() ? tr("none") : findings.join(QStringLiteral("<br>")));
}

} // namespace spark
