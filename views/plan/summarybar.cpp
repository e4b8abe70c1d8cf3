#include "views/plan/summarybar.h"

#include "core/bench/benchreport.h"
#include "core/plan/quantplan.h"
#include "core/plan/timingprediction.h"
#include "views/plan/planspeedprediction.h"
#include "views/shared/elidinglabel.h"
#include "views/shared/formatting.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

namespace spark {

namespace {

// "−40.1 %" (the bytes are in the Before and After columns); empty when nothing changes (the Linears a
// plan keeps BF16).
QString byteChange(std::uint64_t before, std::uint64_t after)
{
    if (before == after || before == 0) {
        return {};
    }
    const double percent =
        100.0 * (static_cast<double>(after) - static_cast<double>(before)) / static_cast<double>(before);
    return QStringLiteral("%1%2 %")
        .arg(percent < 0 ? QStringLiteral("−") : QStringLiteral("+"))
        .arg(std::abs(percent), 0, 'f', 1);
}

QString milliseconds(double ms)
{
    return SummaryBar::tr("%1 ms").arg(ms, 0, 'f', 4);
}

} // namespace

SummaryBar::SummaryBar(QWidget* parent) : QWidget(parent)
{
    // A table, not a paragraph: one row per scheme and per prediction, numbers in columns that line up.
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setObjectName(QStringLiteral("planSummary"));
    m_table->setHorizontalHeaderLabels({tr("Plan"), tr("Modules"), tr("Before"), tr("After"), tr("Change")});
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionMode(QAbstractItemView::ContiguousSelection);
    m_table->setFocusPolicy(Qt::NoFocus);
    m_table->setWordWrap(false);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_table->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // As wide as its columns: the timing inputs beside it keep their full width.
    m_table->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
    m_table->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    auto* header = m_table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);

    // One line each, elided to the column with the full text as tooltip: a wrapped paragraph's height
    // depends on its width, which a splitter does not reserve, and it would be drawn over the inputs.
    m_speed = new ElidingLabel(this);
    m_speed->setObjectName(QStringLiteral("planSpeed"));
    m_speed->hide();
    m_assumption = new QLabel(QString::fromStdString(std::string(timingAssumption())), this);
    m_assumption->setObjectName(QStringLiteral("planAssumption"));
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
        // The bandwidth is the item's tooltip and is named under the table whenever the prediction uses it.
        m_device->addItem(QString::fromStdString(device.name), device.bandwidthGBps);
        m_device->setItemData(m_device->count() - 1,
                              tr("%1 GB/s of memory bandwidth").arg(device.bandwidthGBps, 0, 'f', 0),
                              Qt::ToolTipRole);
    }
    m_device->setToolTip(tr("Memory bandwidth used when no drafter time was measured."));
    m_device->setSizeAdjustPolicy(QComboBox::AdjustToContents);

    auto* inputs = new QFormLayout;
    inputs->setContentsMargins(0, 0, 0, 0);
    inputs->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
    inputs->addRow(tr("Drafter step:"), m_drafterMs);
    inputs->addRow(tr("Decode cycle:"), m_cycleMs);
    inputs->addRow(tr("Device:"), m_device);

    // What the timing rests on: its basis always in view, the model's assumptions on demand.
    m_basis = new ElidingLabel(this);
    m_basis->setObjectName(QStringLiteral("planBasis"));
    m_basis->setForegroundRole(QPalette::PlaceholderText);
    m_assumptionToggle = new QToolButton(this);
    m_assumptionToggle->setObjectName(QStringLiteral("planAssumptionToggle"));
    m_assumptionToggle->setText(tr("Assumptions"));
    m_assumptionToggle->setCheckable(true);
    m_assumptionToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_assumptionToggle->setArrowType(Qt::RightArrow);
    m_assumptionToggle->setAutoRaise(true);
    m_assumptionToggle->setToolTip(tr("What the timing prediction assumes"));
    m_assumption->hide();
    connect(m_assumptionToggle, &QToolButton::toggled, this, [this](bool on) {
        m_assumption->setVisible(on);
        m_assumptionToggle->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
    });
    auto* basisRow = new QHBoxLayout;
    basisRow->setContentsMargins(0, 0, 0, 0);
    basisRow->addWidget(m_basis, 1);
    basisRow->addWidget(m_assumptionToggle, 0, Qt::AlignTop);

    // One column: the table, the inputs under it, then the words, so the summary fits the rules' column.
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addWidget(m_table, 0, Qt::AlignLeft);
    layout->addLayout(inputs);
    layout->addWidget(m_speed);
    layout->addLayout(basisRow);
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
    return m_speed->isHidden() ? QString() : m_speed->fullText();
}

QString SummaryBar::sizeText() const
{
    return m_sizeText;
}

QString SummaryBar::timingText() const
{
    return m_timingText;
}

void SummaryBar::addRow(const QStringList& cells, const QString& toolTip, bool bold)
{
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    for (int column = 0; column < ColumnCount; ++column) {
        auto* item = new QTableWidgetItem(column < cells.size() ? cells.at(column) : QString());
        if (column >= Before && column <= Change) {
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        }
        if (bold) {
            QFont font = item->font();
            font.setBold(true);
            item->setFont(font);
        }
        item->setToolTip(toolTip);
        m_table->setItem(row, column, item);
    }
}

void SummaryBar::fitTableToContents()
{
    // Every row stays in view: the table is as tall as its rows, the tabs above it get the rest.
    int height = m_table->horizontalHeader()->sizeHint().height() + 2 * m_table->frameWidth();
    for (int row = 0; row < m_table->rowCount(); ++row) {
        height += m_table->rowHeight(row);
    }
    m_table->setFixedHeight(height);
    // Every column too: the Plan tab's left column is never narrower than the table (the rules editor above
    // it would let the splitter hide After and Change).
    m_table->setMinimumWidth(m_table->horizontalHeader()->length() + 2 * m_table->frameWidth());
}

void SummaryBar::update()
{
    m_table->clearSpans();
    m_table->setRowCount(0);
    m_speed->setFullText({});
    m_speed->hide();
    if (!m_plan) {
        m_sizeText = tr("No plan: open a draft checkpoint.");
        m_timingText.clear();
        addRow({m_sizeText});
        m_table->setSpan(0, 0, 1, ColumnCount);
        fitTableToContents();
        return;
    }
    const auto& sizes = m_plan->sizes;
    const double before = static_cast<double>(sizes.bytesBefore);
    const double saved = static_cast<double>(sizes.residentSaved());
    const QString kvCache = tr("%1 handed back to the KV cache").arg(localizedBytes(sizes.residentSaved()));
    m_sizeText = tr("Size %1 → %2 (−%3 %) · %4 · %n module(s) quantized", nullptr, sizes.quantizedModules)
                     .arg(localizedBytes(sizes.bytesBefore), localizedBytes(sizes.bytesAfter))
                     .arg(before > 0 ? 100.0 * saved / before : 0.0, 0, 'f', 1)
                     .arg(kvCache);
    // Bytes per scheme: the Linear weights each scheme holds, before → after.
    QStringList perScheme;
    for (const auto& [name, bytes] : sizes.byScheme) {
        const QString scheme = QString::fromStdString(name);
        perScheme.append(
            tr("%1: %n module(s), %2 → %3", nullptr, bytes.modules)
                .arg(scheme, localizedBytes(bytes.bytesBefore), localizedBytes(bytes.bytesAfter)));
        addRow({scheme, QString::number(bytes.modules), localizedBytes(bytes.bytesBefore),
                localizedBytes(bytes.bytesAfter), byteChange(bytes.bytesBefore, bytes.bytesAfter)},
               tr("The Linear weights planned %1, before → after.").arg(scheme));
    }
    if (sizes.byScheme.size() > 1) {
        m_sizeText += QStringLiteral(" · ") + perScheme.join(QStringLiteral(" · "));
    }
    addRow({tr("Checkpoint"), tr("%n quantized", nullptr, sizes.quantizedModules),
            localizedBytes(sizes.bytesBefore), localizedBytes(sizes.bytesAfter),
            byteChange(sizes.bytesBefore, sizes.bytesAfter)},
           tr("Every tensor of the checkpoint; %1.").arg(kvCache), true);
    addRow({tr("KV cache"), QString(), QString(), QString(),
            QStringLiteral("+") + localizedBytes(sizes.residentSaved())},
           tr("Resident memory the plan hands back to the KV cache (weights stay resident in full)."));

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
    if (!p.available) {
        m_timingText = tr("No timing prediction for these inputs.");
        addRow({tr("Drafter step"), m_timingText});
        m_table->setSpan(m_table->rowCount() - 1, Modules, 1, ColumnCount - Modules);
        m_basis->setFullText({});
        m_assumption->setText(QString::fromStdString(std::string(timingAssumption())));
        fitTableToContents();
        return;
    }
    // With benchmarks of the unquantized draft, the speed model turns the saving into tok/s and k*.
    const auto speed =
        m_benchmarks ? predictPlanSpeed(*m_plan, *m_benchmarks, p.drafterMsBefore) : PlanSpeedPrediction{};
    const QString basis = QString::fromStdString(p.basis);
    m_timingText = tr("Drafter step %1 ms → %2 ms (saves %3 ms, from %4)")
                       .arg(p.drafterMsBefore, 0, 'f', 4)
                       .arg(p.drafterMsAfter, 0, 'f', 4)
                       .arg(p.savingMs, 0, 'f', 4)
                       .arg(basis);
    addRow({tr("Drafter step"), QString(), milliseconds(p.drafterMsBefore), milliseconds(p.drafterMsAfter),
            QStringLiteral("−") + milliseconds(p.savingMs)},
           tr("One draft step, from %1.").arg(basis));
    QString hint;
    if (p.speedup) {
        m_timingText += tr(" · decode speedup ×%1").arg(*p.speedup, 0, 'f', 3);
        addRow({tr("Decode cycle"), QString(), milliseconds(*inputs.cycleMs),
                milliseconds(*inputs.cycleMs - p.savingMs), tr("×%1 speed").arg(*p.speedup, 0, 'f', 3)},
               tr("Measured decode cycle, less the drafter's saving; acceptance assumed unchanged."));
    } else if (speed.text.isEmpty()) {
        hint =
            tr("Enter a decode cycle time for the speedup, or import benchmarks of the unquantized draft.");
        m_timingText += tr(" · enter a decode cycle time for the speedup, or import benchmarks of the "
                           "unquantized draft");
    }
    // What every timing number rests on, in words: the basis of the drafter step, then the model.
    m_basis->setFullText(tr("Drafter step from %1.").arg(basis));
    QStringList assumption;
    if (!p.assumption.empty()) {
        assumption.append(QString::fromStdString(p.assumption));
    }
    if (!speed.assumption.isEmpty()) {
        // The speed model's conditions run to several lines: they sit on the predictions they qualify (a
        // tooltip), so that the plan's tables keep their height in a 700-pixel window.
        assumption.append(
            tr("The decode predictions rest on the speed model's conditions: hover over them to read them."));
    }
    if (!hint.isEmpty()) {
        assumption.append(hint);
    }
    m_assumption->setText(assumption.join(QLatin1Char(' ')));
    if (!speed.text.isEmpty()) {
        m_speed->setFullText(speed.text);
        m_speed->setToolTip(speed.text + QStringLiteral("\n\n") + speed.assumption);
        m_speed->setStyleSheet(speed.error ? QStringLiteral("QLabel { color: #d93025; }") : QString());
        m_speed->show();
    }
    fitTableToContents();
}

} // namespace spark
