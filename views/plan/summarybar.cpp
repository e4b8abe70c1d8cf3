#include "views/plan/summarybar.h"

#include "core/bench/benchreport.h"
#include "core/plan/quantplan.h"
#include "core/plan/timingprediction.h"
#include "views/plan/planspeedprediction.h"
#include "views/shared/formatting.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace spark {

SummaryBar::SummaryBar(QWidget* parent) : QWidget(parent)
{
    m_size = new QLabel(this);
    m_size->setObjectName(QStringLiteral("planSize"));
    m_size->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A mixed plan's line runs long: wrapped, it never makes the window wider than the screen allows.
    m_size->setWordWrap(true);
    QFont bold = m_size->font();
    bold.setBold(true);
    m_size->setFont(bold);
    m_timing = new QLabel(this);
    m_timing->setObjectName(QStringLiteral("planTiming"));
    m_timing->setWordWrap(true);
    m_timing->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_speed = new QLabel(this);
    m_speed->setObjectName(QStringLiteral("planSpeed"));
    m_speed->setWordWrap(true);
    m_speed->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_speed->hide();
    m_assumption = new QLabel(QString::fromStdString(std::string(timingAssumption())), this);
    m_assumption->setWordWrap(true);
    m_assumption->setForegroundRole(QPalette::PlaceholderText);

    // 0 is "not measured": the prediction then falls back to the device's bandwidth.
    m_drafterMs = new QDoubleSpinBox(this);
    m_drafterMs->setObjectName(QStringLiteral("drafterMs"));
    m_drafterMs->setRange(0, 10000);
    m_drafterMs->setDecimals(3);
    m_drafterMs->setSuffix(tr(" ms"));
    m_drafterMs->setSpecialValueText(tr("not measured"));
    m_drafterMs->setToolTip(tr("Measured time of one step of the unquantized drafter. Leave at 0 to "
                               "estimate it from the device's memory bandwidth (a lower bound)."));
    m_cycleMs = new QDoubleSpinBox(this);
    m_cycleMs->setObjectName(QStringLiteral("cycleMs"));
    m_cycleMs->setRange(0, 100000);
    m_cycleMs->setDecimals(3);
    m_cycleMs->setSuffix(tr(" ms"));
    m_cycleMs->setSpecialValueText(tr("not measured"));
    m_cycleMs->setToolTip(tr("Measured time of one decode cycle (draft + verification); needed for the "
                             "speedup."));
    m_device = new QComboBox(this);
    m_device->setObjectName(QStringLiteral("devicePreset"));
    for (const auto& device : devicePresets()) {
        m_device->addItem(
            tr("%1 (%2 GB/s)").arg(QString::fromStdString(device.name)).arg(device.bandwidthGBps, 0, 'f', 0),
            device.bandwidthGBps);
    }
    m_device->setToolTip(tr("Memory bandwidth used when no drafter time was measured."));

    auto* inputs = new QHBoxLayout;
    inputs->addWidget(new QLabel(tr("Drafter step:"), this));
    inputs->addWidget(m_drafterMs);
    inputs->addWidget(new QLabel(tr("Decode cycle:"), this));
    inputs->addWidget(m_cycleMs);
    inputs->addWidget(new QLabel(tr("Device:"), this));
    inputs->addWidget(m_device);
    inputs->addStretch(1);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_size);
    layout->addLayout(inputs);
    layout->addWidget(m_timing);
    layout->addWidget(m_speed);
    layout->addWidget(m_assumption);

    connect(m_drafterMs, &QDoubleSpinBox::valueChanged, this, &SummaryBar::update);
    connect(m_cycleMs, &QDoubleSpinBox::valueChanged, this, &SummaryBar::update);
    connect(m_device, &QComboBox::currentIndexChanged, this, &SummaryBar::update);
    update();
}

void SummaryBar::setPlan(std::shared_ptr<const QuantPlan> plan)
{
    m_plan = std::move(plan);
    update();
}

void SummaryBar::setBenchmarks(std::shared_ptr<const BenchReport> report)
{
    m_benchmarks = std::move(report);
    update();
}

QString SummaryBar::speedText() const
{
    return m_speed->isHidden() ? QString() : m_speed->text();
}

QString SummaryBar::sizeText() const
{
    return m_size->text();
}

QString SummaryBar::timingText() const
{
    return m_timing->text();
}

void SummaryBar::update()
{
    if (!m_plan) {
        m_size->setText(tr("No plan: open a draft checkpoint."));
        m_timing->clear();
        m_speed->clear();
        m_speed->hide();
        return;
    }
    const auto& sizes = m_plan->sizes;
    const double before = static_cast<double>(sizes.bytesBefore);
    const double saved = static_cast<double>(sizes.residentSaved());
    m_size->setText(tr("Size %1 → %2 (−%3 %) · %4 handed back to the KV cache · %n module(s) quantized",
                       nullptr, sizes.quantizedModules)
                        .arg(localizedBytes(sizes.bytesBefore), localizedBytes(sizes.bytesAfter))
                        .arg(before > 0 ? 100.0 * saved / before : 0.0, 0, 'f', 1)
                        .arg(localizedBytes(sizes.residentSaved())));
    // Bytes per scheme: the Linear weights each scheme holds, before → after.
    QStringList perScheme;
    for (const auto& [name, bytes] : sizes.byScheme) {
        perScheme.append(tr("%1: %n module(s), %2 → %3", nullptr, bytes.modules)
                             .arg(QString::fromStdString(name), localizedBytes(bytes.bytesBefore),
                                  localizedBytes(bytes.bytesAfter)));
    }
    m_size->setToolTip(perScheme.join(QLatin1Char('\n')));
    if (sizes.byScheme.size() > 1) {
        m_size->setText(m_size->text() + QStringLiteral(" · ") + perScheme.join(QStringLiteral(" · ")));
    }

    TimingInputs inputs;
    if (m_drafterMs->value() > 0) {
        inputs.drafterMs = m_drafterMs->value();
    } else {
        inputs.bandwidthGBps = m_device->currentData().toDouble();
    }
    if (m_cycleMs->value() > 0) {
        inputs.cycleMs = m_cycleMs->value();
    }
    const TimingPrediction p = predictTiming(sizes, inputs);
    m_speed->clear();
    m_speed->hide();
    if (!p.available) {
        m_timing->setText(tr("No timing prediction for these inputs."));
        return;
    }
    // With benchmarks of the unquantized draft, the speed model turns the saving into tok/s and k*.
    const auto speed =
        m_benchmarks ? predictPlanSpeed(*m_plan, *m_benchmarks, p.drafterMsBefore) : PlanSpeedPrediction{};
    QString text = tr("Drafter step %1 ms → %2 ms (saves %3 ms, from %4)")
                       .arg(p.drafterMsBefore, 0, 'f', 4)
                       .arg(p.drafterMsAfter, 0, 'f', 4)
                       .arg(p.savingMs, 0, 'f', 4)
                       .arg(QString::fromStdString(p.basis));
    if (p.speedup) {
        text += tr(" · decode speedup ×%1").arg(*p.speedup, 0, 'f', 3);
    } else if (speed.text.isEmpty()) {
        text += tr(" · enter a decode cycle time for the speedup, or import benchmarks of the unquantized "
                   "draft");
    }
    m_timing->setText(text);
    // The speed model's conditions run to several lines: they sit on the predictions they qualify (a
    // tooltip), so that the plan's tables keep their height in a 700-pixel window.
    if (!p.assumption.empty()) {
        m_assumption->setText(QString::fromStdString(p.assumption) +
                              (speed.assumption.isEmpty()
                                   ? QString()
                                   : QLatin1Char(' ') + tr("The decode predictions rest on the speed model's "
                                                           "conditions: hover over them to read them.")));
    }
    if (!speed.text.isEmpty()) {
        m_speed->setToolTip(speed.assumption);
        m_speed->setText(speed.text);
        m_speed->setStyleSheet(speed.error ? QStringLiteral("QLabel { color: #d93025; }") : QString());
        m_speed->show();
    }
}

} // namespace spark
