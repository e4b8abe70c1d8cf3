#include "views/plan/budgetpanel.h"

#include "core/plan/preset.h"
#include "views/document/document.h"
#include "views/plan/frontierplot.h"
#include "views/plan/plancontroller.h"
#include "views/plan/sweepjob.h"
#include "views/shared/formatting.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <stdexcept>

namespace spark {
namespace {

QString errorText(double e)
{
    return QLocale().toString(e, 'e', 3);
}

QStringList toStringList(const std::vector<std::string>& items)
{
    QStringList out;
    for (const auto& s : items) {
        out.append(QString::fromStdString(s));
    }
    return out;
}

} // namespace

BudgetPanel::BudgetPanel(PlanController* controller, QWidget* parent)
    : QWidget(parent), m_controller(controller), m_job(new SweepJob(this)), m_plot(new FrontierPlot(this)),
      m_sweepButton(new QPushButton(tr("&Sweep Schemes"), this)),
      m_cancelButton(new QPushButton(tr("Cancel"), this)), m_progress(new QProgressBar(this)),
      m_priors(new QCheckBox(tr("Role &priors for α"), this)),
      m_searchRounding(new QCheckBox(tr("Also search &rounding"), this)), m_alphaSource(new QLabel(this)),
      m_clearAlphas(new QPushButton(tr("Clear α"), this)), m_axis(new QComboBox(this)),
      m_slider(new QSlider(Qt::Horizontal, this)), m_summary(new QLabel(this)),
      m_changes(new QTableWidget(0, 4, this))
{
    m_sweepButton->setObjectName(QStringLiteral("sweepButton"));
    m_sweepButton->setToolTip(
        tr("Measure rel. error and bytes of every decision unit under every legal scheme "
           "(one pass over the weights)."));
    m_cancelButton->setEnabled(false);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setMaximumWidth(fontMetrics().averageCharWidth() * 24);
    m_priors->setToolTip(tr("α per role instead of 1 everywhere: fc 2, down_proj 1.5, q/k/v 1.5, others 1 "
                            "(heuristics, not measurements)."));
    m_searchRounding->setObjectName(QStringLiteral("searchRoundingBox"));
    m_searchRounding->setToolTip(
        tr("Sweep every candidate scheme under mse and range rounding as well as rtn, so that the allocator "
           "picks a rounding per unit (same bytes, lower error; the sweep takes several times longer)."));
    m_axis->addItem(tr("Streamed bytes"));
    m_axis->addItem(tr("Drafter ms on GB10 (273 GB/s)"), 273.0);
    m_axis->addItem(tr("Drafter ms on H200 (4800 GB/s)"), 4800.0);
    m_slider->setObjectName(QStringLiteral("budgetSlider"));
    m_slider->setEnabled(false);
    m_slider->setToolTip(
        tr("Budget: each step is a point of the exact Pareto frontier; moving it applies that "
           "plan (undoable)."));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_changes->setHorizontalHeaderLabels({tr("Module"), tr("Before"), tr("After"), tr("Rel. error")});
    // Scheme names ("W8A16:channel") and errors are short and must read in full; the module name takes the
    // rest, shortened in the middle where its layer index and leaf are.
    m_changes->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int column = 1; column < 4; ++column) {
        m_changes->horizontalHeader()->setSectionResizeMode(column, QHeaderView::ResizeToContents);
    }
    m_changes->setTextElideMode(Qt::ElideMiddle);
    m_changes->setWordWrap(false);
    m_changes->verticalHeader()->hide();
    m_changes->setEditTriggers(QAbstractItemView::NoEditTriggers);

    auto* top = new QHBoxLayout;
    top->addWidget(m_sweepButton);
    top->addWidget(m_cancelButton);
    top->addWidget(m_progress);
    top->addWidget(m_searchRounding);
    top->addWidget(m_priors);
    m_alphaSource->setObjectName(QStringLiteral("budgetAlphaSource"));
    m_alphaSource->hide();
    m_clearAlphas->setToolTip(tr("Drop the α rules handed over from another tab"));
    m_clearAlphas->hide();
    top->addWidget(m_alphaSource);
    top->addWidget(m_clearAlphas);
    top->addStretch(1);
    top->addWidget(new QLabel(tr("x axis:"), this));
    top->addWidget(m_axis);
    auto* sliderRow = new QHBoxLayout;
    sliderRow->addWidget(new QLabel(tr("Budget:"), this));
    sliderRow->addWidget(m_slider, 1);
    // The changes table sits beside the plot, not under it: at 1200×700 a table below the plot kept three
    // rows; beside it, it has the plot's full height.
    auto* changesBox = new QWidget(this);
    auto* changesLayout = new QVBoxLayout(changesBox);
    changesLayout->setContentsMargins(0, 0, 0, 0);
    changesLayout->addWidget(new QLabel(tr("What the last budget change changed:"), changesBox));
    changesLayout->addWidget(m_changes, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("budgetSplitter"));
    split->setChildrenCollapsible(false);
    split->addWidget(m_plot);
    split->addWidget(changesBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    // Start at 3:2 as well: from its size hint alone, a table of many rows took most of the width and cut the
    // plot's legend off.
    split->setSizes({3000, 2000});
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    layout->addLayout(sliderRow);
    layout->addWidget(m_summary);

    connect(m_sweepButton, &QPushButton::clicked, this, &BudgetPanel::startSweep);
    connect(m_cancelButton, &QPushButton::clicked, this, &BudgetPanel::cancelSweep);
    connect(m_job, &SweepJob::progressChanged, this,
            [this](double fraction) { m_progress->setValue(static_cast<int>(fraction * 1000)); });
    connect(m_job, &SweepJob::finished, this, &BudgetPanel::onSweepFinished);
    connect(m_priors, &QCheckBox::toggled, this, &BudgetPanel::rebuildAllocator);
    connect(m_clearAlphas, &QPushButton::clicked, this, [this] { setExternalAlphas({}, {}); });
    connect(m_axis, &QComboBox::currentIndexChanged, this, [this] {
        const auto data = m_axis->currentData();
        m_plot->setBandwidth(data.isValid() ? std::optional<double>(data.toDouble()) : std::nullopt);
    });
    // A drag is one undo step: the merge key changes when the slider is grabbed, not while it moves.
    connect(m_slider, &QSlider::sliderPressed, this, [this] { ++m_mergeSession; });
    connect(m_slider, &QSlider::valueChanged, this, &BudgetPanel::onSliderMoved);
    connect(m_plot, &FrontierPlot::pointClicked, this, [this](int index) {
        ++m_mergeSession;
        m_slider->setValue(index);
    });
    connect(m_controller, &PlanController::planChanged, this, &BudgetPanel::onPlanChanged);
    // Another draft: the sweep no longer applies.
    connect(m_controller->document(), &Document::snapshotChanged, this, [this] {
        m_job->cancel();
        m_sweep.reset();
        m_externalAlphas.clear();
        m_alphaSource->hide();
        m_clearAlphas->hide();
        rebuildAllocator();
        Q_EMIT sweepChanged(nullptr);
    });
    updateSummary();
}

void BudgetPanel::startSweep()
{
    const auto snapshot = m_controller->document()->snapshot();
    if (!snapshot || !snapshot->checkpoint) {
        Q_EMIT statusMessage(tr("Open a draft checkpoint before sweeping."));
        return;
    }
    const auto plan = m_controller->plan();
    if (!plan || !plan->errors.empty()) {
        Q_EMIT statusMessage(tr("The plan has errors: fix them before sweeping."));
        return;
    }
    SweepOptions options;
    options.plan = m_controller->planOptions();
    if (m_searchRounding->isChecked()) {
        options.roundings = parseRoundingCandidates("mse,range");
    }
    m_baseEdits = m_controller->edits();
    m_progress->setValue(0);
    m_sweepButton->setEnabled(false);
    m_cancelButton->setEnabled(true);
    m_job->start(snapshot->checkpoint, options);
    Q_EMIT statusMessage(tr("Sweeping every legal scheme of every decision unit…"));
}

void BudgetPanel::cancelSweep()
{
    m_job->cancel();
}

void BudgetPanel::onSweepFinished(const SweepJobResult& result)
{
    m_sweepButton->setEnabled(true);
    m_cancelButton->setEnabled(false);
    if (!result.error.isEmpty()) {
        Q_EMIT statusMessage(tr("Sweep failed: %1").arg(result.error));
        return;
    }
    if (!result.sweep) {
        Q_EMIT statusMessage(tr("Sweep cancelled."));
        return;
    }
    m_sweep = result.sweep;
    m_progress->setValue(1000);
    rebuildAllocator();
    Q_EMIT sweepChanged(m_sweep);
    Q_EMIT statusMessage(tr("Sweep done: %1 units in %2 s.")
                             .arg(m_sweep->units.size())
                             .arg(QLocale().toString(m_sweep->seconds, 'f', 1)));
}

void BudgetPanel::setExternalAlphas(const QStringList& rules, const QString& source)
{
    m_externalAlphas = rules;
    m_alphaSource->setText(tr("α: %1").arg(source));
    m_alphaSource->setToolTip(rules.join(QLatin1Char('\n')));
    m_alphaSource->setVisible(!rules.isEmpty());
    m_clearAlphas->setVisible(!rules.isEmpty());
    rebuildAllocator();
    if (!rules.isEmpty() && !m_sweep) {
        Q_EMIT statusMessage(tr("α from %1 will weigh the frontier once the draft is swept.").arg(source));
    }
}

std::vector<std::string> BudgetPanel::alphaRules() const
{
    std::vector<std::string> rules;
    if (m_priors->isChecked()) {
        rules = rolePriorAlphas();
    }
    for (const auto& rule : m_externalAlphas) {
        rules.push_back(rule.toStdString());
    }
    return rules;
}

void BudgetPanel::rebuildAllocator()
{
    m_allocator.reset();
    m_applied = -1;
    if (m_sweep) {
        std::vector<double> alphas;
        try {
            alphas = resolveAlphas(*m_sweep, alphaRules());
        } catch (const std::invalid_argument& e) {
            // A malformed handed-over rule: say so and fall back to the priors alone.
            Q_EMIT statusMessage(tr("α rules ignored: %1").arg(QString::fromStdString(e.what())));
            alphas = resolveAlphas(*m_sweep,
                                   m_priors->isChecked() ? rolePriorAlphas() : std::vector<std::string>{});
        }
        m_allocator = std::make_unique<BudgetAllocator>(*m_sweep, alphas);
    }
    std::vector<FrontierPlot::Marker> markers;
    const auto snapshot = m_controller->document()->snapshot();
    if (m_allocator && snapshot && snapshot->checkpoint) {
        // Each preset as the user's options would plan it; presets that change which units exist (a patched
        // vLLM's q/k/v) are not on this sweep and are left out.
        std::vector<TensorInfo> infos;
        for (const auto& t : snapshot->checkpoint->tensors()) {
            infos.push_back(t.info);
        }
        for (const auto& preset : presets()) {
            auto options = m_sweep->plan;
            options.preset = preset.name;
            const auto point =
                m_allocator->evaluate(makePlan(snapshot->checkpoint->config(), infos, options));
            if (!point) {
                continue;
            }
            // Presets that make the same plan share one point and one legend entry.
            const auto same =
                std::find_if(markers.begin(), markers.end(), [&](const FrontierPlot::Marker& m) {
                    return m.point.streamedBytes == point->streamedBytes && m.point.bytes == point->bytes &&
                           m.point.weightedError == point->weightedError;
                });
            if (same != markers.end()) {
                same->label += QStringLiteral(", ") + QString::fromStdString(preset.name);
            } else {
                markers.push_back({QString::fromStdString(preset.name), *point});
            }
        }
    }
    m_plot->setFrontier(m_allocator ? m_allocator->frontier() : std::vector<FrontierPoint>{}, markers);
    m_settingSlider = true;
    m_slider->setEnabled(m_allocator != nullptr);
    m_slider->setRange(0, m_allocator ? static_cast<int>(m_allocator->frontier().size()) - 1 : 0);
    m_settingSlider = false;
    onPlanChanged();
}

void BudgetPanel::onPlanChanged()
{
    std::optional<FrontierPoint> current;
    if (const auto plan = m_controller->plan(); plan && m_allocator) {
        current = m_allocator->evaluate(*plan);
    }
    m_plot->setCurrent(current);
    // The slider rests on the best frontier point within the current plan's bytes (without applying it).
    if (current && m_allocator) {
        if (const auto index = m_allocator->bestWithin(current->streamedBytes)) {
            m_settingSlider = true;
            m_slider->setValue(static_cast<int>(*index));
            m_settingSlider = false;
        }
    }
    updateSummary();
}

void BudgetPanel::onSliderMoved(int value)
{
    if (m_settingSlider) {
        return;
    }
    if (!m_slider->isSliderDown()) {
        ++m_mergeSession; // keyboard steps and clicks are undo steps of their own
    }
    applyPoint(value);
}

void BudgetPanel::applyPoint(int index)
{
    if (!m_allocator || index < 0 || index >= static_cast<int>(m_allocator->frontier().size())) {
        return;
    }
    const auto allocation = m_allocator->atFrontier(static_cast<std::size_t>(index));
    // What changes, module by module, against the plan in use: its scheme, or its rounding.
    using Choice = std::pair<const WeightScheme*, const RoundingMethod*>;
    const auto choiceText = [](const Choice& c) {
        return c.second == &rtnRounding() ? schemeText(*c.first)
                                          : tr("%1 · %2").arg(schemeText(*c.first), roundingText(*c.second));
    };
    std::map<std::string, Choice> before;
    if (const auto plan = m_controller->plan()) {
        for (const auto& m : plan->modules) {
            before[m.name] = m.decision == PlanDecision::Quantize && m.rounding
                                 ? Choice{m.scheme, m.rounding}
                                 : Choice{&keepScheme(), &rtnRounding()};
        }
    }
    m_changes->setRowCount(0);
    for (const auto& choice : allocation.units) {
        const Choice now{choice.scheme, choice.scheme->quantizes() ? choice.rounding : &rtnRounding()};
        for (const auto& module : m_sweep->units[choice.unit].modules) {
            const auto it = before.find(module);
            if (it == before.end() || it->second == now) {
                continue;
            }
            const int row = m_changes->rowCount();
            m_changes->insertRow(row);
            m_changes->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(module)));
            m_changes->setItem(row, 1, new QTableWidgetItem(choiceText(it->second)));
            m_changes->setItem(row, 2, new QTableWidgetItem(choiceText(now)));
            m_changes->setItem(row, 3, new QTableWidgetItem(formatRelError(choice.relErr)));
        }
    }
    PlanEdits after = m_baseEdits;
    after.schemes.append(toStringList(allocation.rules));
    after.roundings.append(toStringList(allocation.roundingRules));
    PlanBudget record;
    record.objective = "streamed_bytes";
    record.budgetBytes = allocation.point.streamedBytes;
    record.weightedError = allocation.point.weightedError;
    record.alpha = alphaRules();
    for (const auto* scheme : m_sweep->candidates) {
        record.candidates.emplace_back(scheme->name);
    }
    for (const auto* method : m_sweep->roundings) {
        if (method != &rtnRounding()) {
            record.roundingCandidates.emplace_back(method->name);
        }
    }
    after.budget = std::move(record);
    m_applied = index;
    m_controller->edit(
        after,
        tr("Budget %1 (E %2)")
            .arg(localizedBytes(allocation.point.streamedBytes), errorText(allocation.point.weightedError)),
        QStringLiteral("budget-%1").arg(m_mergeSession));
    m_controller->recomputeNow();
    updateSummary();
}

QString BudgetPanel::summaryText() const
{
    return m_summary->text();
}

void BudgetPanel::updateSummary()
{
    if (!m_allocator) {
        m_summary->setText(m_job->isRunning()
                               ? tr("Sweeping…")
                               : tr("Sweep the draft to see the exact trade-off between streamed bytes "
                                    "and weighted error, then pick a budget."));
        return;
    }
    const auto& f = m_allocator->frontier();
    const int at = m_slider->value();
    QString text =
        tr("%1 frontier points (built in %2 ms), sweep %3 s at %4 GB/s.")
            .arg(f.size())
            .arg(QLocale().toString(m_allocator->buildSeconds() * 1e3, 'f', 1))
            .arg(QLocale().toString(m_sweep->seconds, 'f', 1))
            .arg(QLocale().toString(m_sweep->seconds > 0
                                        ? static_cast<double>(m_sweep->bytesMeasured) / m_sweep->seconds / 1e9
                                        : 0.0,
                                    'f', 2));
    if (at >= 0 && at < static_cast<int>(f.size())) {
        text += QLatin1Char(' ') + tr("Budget point: %1 streamed, %2 on disk, E %3.")
                                       .arg(localizedBytes(f[static_cast<std::size_t>(at)].streamedBytes),
                                            localizedBytes(f[static_cast<std::size_t>(at)].bytes),
                                            errorText(f[static_cast<std::size_t>(at)].weightedError));
    }
    m_summary->setText(text);
}

} // namespace spark
