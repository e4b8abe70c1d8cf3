#include "views/plan/budgetpanel.h"

#include "core/forward/expectedacceptance.h"
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
      m_scoreButton(new QPushButton(tr("Score by &Acceptance"), this)),
      m_measureButton(new QPushButton(tr("&Measure Plan"), this)),
      m_cancelButton(new QPushButton(tr("Cancel"), this)), m_progress(new JobProgressBar(this)),
      m_priors(new QCheckBox(tr("Role &priors for α"), this)),
      m_searchRounding(new QCheckBox(tr("Also search &rounding"), this)), m_alphaSource(new QLabel(this)),
      m_clearAlphas(new QPushButton(tr("Clear α"), this)), m_axis(new QComboBox(this)),
      m_slider(new QSlider(Qt::Horizontal, this)), m_summary(new QLabel(this)),
      m_changes(new QTableWidget(0, 4, this)),
      m_scoring(
          this, [this](double f) { m_progress->setFraction(f); },
          [this](const AcceptanceScores& r) { onScoresFinished(r); }),
      m_measuring(
          this, [this](double f) { m_progress->setFraction(f); },
          [this](const PlanMeasurement& r) { onMeasurementFinished(r); })
{
    m_sweepButton->setObjectName(QStringLiteral("sweepButton"));
    m_sweepButton->setToolTip(
        tr("Measure rel. error and bytes of every decision unit under every legal scheme "
           "(one pass over the weights)."));
    m_scoreButton->setObjectName(QStringLiteral("scoreButton"));
    m_scoreButton->setToolTip(tr(
        "Choose plans by what they do to acceptance: every legal scheme and rounding of every unit (the "
        "head too, where vLLM can load it quantized) is measured alone on the capture and target set in "
        "the Acceptance tab, and the frontier minimises what the choices cost the draft's expected "
        "acceptance against the target's tokens. Even samples of the capture choose, odd samples report."));
    m_measureButton->setObjectName(QStringLiteral("measureButton"));
    m_measureButton->setToolTip(tr(
        "Measure the plan in use and the plan without a budget (the recipe) whole, on the held-out samples "
        "of the scored capture: Δτ of each against BF16 and of the plan against the recipe, paired, with "
        "95 % intervals."));
    m_measureButton->setEnabled(false);
    m_cancelButton->setEnabled(false);
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

    // Two rows: what to run (by weight error or by acceptance) and its progress, then the weight-error
    // options and the plot's axis; one row would set the window's minimum width.
    auto* top = new QHBoxLayout;
    top->addWidget(m_sweepButton);
    top->addWidget(m_scoreButton);
    top->addWidget(m_measureButton);
    top->addWidget(m_cancelButton);
    top->addWidget(m_progress);
    top->addStretch(1);
    auto* options = new QHBoxLayout;
    options->addWidget(m_searchRounding);
    options->addWidget(m_priors);
    m_alphaSource->setObjectName(QStringLiteral("budgetAlphaSource"));
    m_alphaSource->hide();
    m_clearAlphas->setToolTip(tr("Drop the α rules handed over from another tab"));
    m_clearAlphas->hide();
    options->addWidget(m_alphaSource);
    options->addWidget(m_clearAlphas);
    options->addStretch(1);
    options->addWidget(new QLabel(tr("x axis:"), this));
    options->addWidget(m_axis);
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
    layout->addLayout(options);
    layout->addWidget(split, 1);
    layout->addLayout(sliderRow);
    layout->addWidget(m_summary);

    connect(m_sweepButton, &QPushButton::clicked, this, &BudgetPanel::startSweep);
    connect(m_scoreButton, &QPushButton::clicked, this, &BudgetPanel::startScoring);
    connect(m_measureButton, &QPushButton::clicked, this, &BudgetPanel::startMeasuring);
    connect(m_cancelButton, &QPushButton::clicked, this, &BudgetPanel::cancelSweep);
    connect(m_job, &SweepJob::progressChanged, this,
            [this](double fraction) { m_progress->setFraction(fraction); });
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
        m_scoring.cancel();
        m_measuring.cancel();
        m_sweep.reset();
        m_scores.reset();
        m_measurement.reset();
        m_externalAlphas.clear();
        m_alphaSource->hide();
        m_clearAlphas->hide();
        // What the last budget change changed named the other draft's modules.
        m_changes->setRowCount(0);
        m_baseEdits = {};
        m_appliedEdits.reset();
        m_progress->clear();
        rebuildAllocator(); // the frontier, the slider and the summary follow the dropped sweep
        setRunning(false);
        Q_EMIT sweepChanged(nullptr);
    });
    updateSummary();
}

std::shared_ptr<const Checkpoint> BudgetPanel::draftToMeasure()
{
    const auto snapshot = m_controller->document()->snapshot();
    if (!snapshot || !snapshot->checkpoint) {
        Q_EMIT statusMessage(tr("Open a draft checkpoint first."));
        return nullptr;
    }
    const auto plan = m_controller->plan();
    if (!plan || !plan->errors.empty()) {
        Q_EMIT statusMessage(tr("The plan has errors: fix them first."));
        return nullptr;
    }
    return snapshot->checkpoint;
}

void BudgetPanel::startSweep()
{
    const auto checkpoint = draftToMeasure();
    if (!checkpoint) {
        return;
    }
    m_baseEdits = userEdits();
    SweepOptions options;
    options.plan = m_controller->optionsFor(m_baseEdits);
    if (m_searchRounding->isChecked()) {
        options.roundings = parseRoundingCandidates("mse,range");
    }
    m_progress->start();
    setRunning(true);
    m_job->start(checkpoint, options);
    Q_EMIT runningChanged();
    Q_EMIT statusMessage(tr("Sweeping every legal scheme of every decision unit…"));
}

void BudgetPanel::cancelSweep()
{
    m_job->cancel();
    m_scoring.cancel();
    m_measuring.cancel();
}

void BudgetPanel::setRunning(bool running)
{
    m_sweepButton->setEnabled(!running);
    m_scoreButton->setEnabled(!running);
    m_measureButton->setEnabled(!running && m_scores && m_allocator);
    m_cancelButton->setEnabled(running);
}

bool BudgetPanel::isRunning() const
{
    return m_job->isRunning() || m_scoring.isRunning() || m_measuring.isRunning();
}

void BudgetPanel::startScoring()
{
    const auto checkpoint = draftToMeasure();
    if (!checkpoint) {
        return;
    }
    QString why;
    const auto inputs = m_inputsSource ? m_inputsSource(&why) : std::nullopt;
    if (!inputs) {
        Q_EMIT statusMessage(tr("Scoring by acceptance needs a capture: %1").arg(why));
        return;
    }
    m_baseEdits = userEdits();
    m_progress->start();
    setRunning(true);
    m_scoring.start([checkpoint, options = m_controller->optionsFor(m_baseEdits),
                     inputs = *inputs](const ProgressFn& progress) {
        return scoreByAcceptance(checkpoint, options, inputs, progress);
    });
    Q_EMIT runningChanged();
    Q_EMIT statusMessage(tr("Scoring every candidate of every unit by acceptance…"));
    updateSummary();
}

void BudgetPanel::onScoresFinished(const AcceptanceScores& result)
{
    if (!ended(result.error, result.effects != nullptr, tr("Scoring"))) {
        return;
    }
    m_scores = result;
    m_measurement.reset();
    m_sweep = result.sweep;
    m_progress->finish();
    rebuildAllocator();
    setRunning(false);
    Q_EMIT sweepChanged(m_sweep);
    Q_EMIT statusMessage(tr("Scored %1 candidate runs on %2 anchors, %3 survivors on %4, in %5 s.")
                             .arg(result.effects->measuredOnScreen)
                             .arg(result.effects->screenAnchors)
                             .arg(result.effects->measuredOnConfirm)
                             .arg(result.effects->confirmAnchors)
                             .arg(QLocale().toString(result.effects->seconds, 'f', 1)));
}

void BudgetPanel::startMeasuring()
{
    const auto snapshot = m_controller->document()->snapshot();
    const auto plan = m_controller->plan();
    if (!m_scores || !snapshot || !snapshot->checkpoint || !plan) {
        return;
    }
    // The recipe: the plan the scores started from, before any budget rule.
    auto recipe =
        makePlan(snapshot->checkpoint->config(), snapshot->checkpoint->tensorInfos(), m_scores->sweep->plan);
    m_progress->start();
    setRunning(true);
    m_measuring.start([objective = m_scores->objective, plan = *plan,
                       recipe = std::move(recipe)](const ProgressFn& progress) {
        const auto third = [&progress](std::uint64_t offset) -> ProgressFn {
            return [&progress, offset](std::uint64_t done, std::uint64_t total) {
                return reportProgress(progress, offset * total + done, 3 * total);
            };
        };
        PlanMeasurement out;
        out.plan = objective->measurePlan(plan, third(0));
        out.recipe = objective->measurePlan(recipe, third(1));
        out.numericsFloor = objective->measureNumericsFloor(third(2));
        return out;
    });
    Q_EMIT runningChanged();
    Q_EMIT statusMessage(tr("Measuring the plan and the recipe on the held-out samples…"));
}

bool BudgetPanel::ended(const QString& error, bool hasResult, const QString& what)
{
    setRunning(false);
    Q_EMIT runningChanged();
    if (!error.isEmpty() || !hasResult) {
        m_progress->clear();
    }
    if (!error.isEmpty()) {
        Q_EMIT statusMessage(tr("%1 failed: %2").arg(what, error));
    } else if (!hasResult) {
        Q_EMIT statusMessage(tr("%1 cancelled.").arg(what));
    }
    updateSummary();
    return error.isEmpty() && hasResult;
}

void BudgetPanel::onMeasurementFinished(const PlanMeasurement& result)
{
    if (!ended(result.error, result.plan.has_value(), tr("Measurement"))) {
        return;
    }
    m_measurement = result;
    m_progress->finish();
    updateSummary();
    Q_EMIT statusMessage(
        tr("Plan and recipe measured on %1 held-out anchors.").arg(result.plan->report.anchors));
}

void BudgetPanel::onSweepFinished(const SweepJobResult& result)
{
    if (!ended(result.error, result.sweep != nullptr, tr("Sweep"))) {
        return;
    }
    m_sweep = result.sweep;
    m_scores.reset(); // a sweep by weight error replaces the acceptance scores
    m_measurement.reset();
    m_progress->finish();
    rebuildAllocator();
    setRunning(false);
    Q_EMIT sweepChanged(m_sweep);
    Q_EMIT statusMessage(tr("Sweep done: %1 units in %2 s.")
                             .arg(m_sweep->units.size())
                             .arg(QLocale().toString(m_sweep->seconds, 'f', 1)));
}

void BudgetPanel::setExternalAlphas(const QStringList& rules, const QString& source)
{
    // A budget point in use is solved again under the new α, at the same streamed bytes: the plan and the
    // "Budget point" line then describe the same allocation.
    std::optional<std::uint64_t> budget;
    if (m_allocator && m_applied >= 0) {
        budget = m_allocator->frontier()[static_cast<std::size_t>(m_applied)].streamedBytes;
    }
    m_externalAlphas = rules;
    m_alphaSource->setText(tr("α: %1").arg(source));
    m_alphaSource->setToolTip(rules.join(QLatin1Char('\n')));
    m_alphaSource->setVisible(!rules.isEmpty());
    m_clearAlphas->setVisible(!rules.isEmpty());
    rebuildAllocator();
    if (const auto index = budget && m_allocator ? m_allocator->bestWithin(*budget) : std::nullopt) {
        ++m_mergeSession;
        m_settingSlider = true;
        m_slider->setValue(static_cast<int>(*index));
        m_settingSlider = false;
        applyPoint(static_cast<int>(*index));
        Q_EMIT statusMessage(tr("The budget point was solved again with α from %1.").arg(source));
    }
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
    if (m_scores) {
        auto in = acceptanceAllocatorInput(*m_sweep, *m_scores->effects);
        m_allocator = std::make_unique<BudgetAllocator>(std::move(in.sweep), std::move(in.losses));
    } else if (m_sweep) {
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
        // Each preset of this architecture as the user's options would plan it; presets that change which
        // units exist (a patched vLLM's q/k/v) are not on this sweep and are left out.
        const auto infos = snapshot->checkpoint->tensorInfos();
        const auto architecture = detectArchitecture(snapshot->checkpoint->config());
        for (const auto& preset : presets()) {
            // A preset written for another architecture names modules this draft lacks: no reference.
            if (!presetSuits(preset, architecture)) {
                continue;
            }
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
                           m.point.loss == point->loss;
                });
            if (same != markers.end()) {
                same->label += QStringLiteral(", ") + QString::fromStdString(preset.name);
            } else {
                markers.push_back({QString::fromStdString(preset.name), *point});
            }
        }
    }
    // The axis title short enough for the plot's height; the summary below says it whole.
    m_plot->setLossLabel(!m_scores ? tr("weighted error E = Σ α·rel_err²")
                         : m_scores->effects->loss == AcceptanceLoss::Kl
                             ? tr("KL(BF16 || plan), summed")
                             : tr("loss of expected accepted length (t = %1)")
                                   .arg(QLocale().toString(kObjectiveTemperature, 'f', 2)));
    m_plot->setFrontier(m_allocator ? m_allocator->frontier() : std::vector<FrontierPoint>{}, markers);
    m_settingSlider = true;
    m_slider->setEnabled(m_allocator != nullptr);
    m_slider->setRange(0, m_allocator ? static_cast<int>(m_allocator->frontier().size()) - 1 : 0);
    m_settingSlider = false;
    onPlanChanged();
}

void BudgetPanel::onPlanChanged()
{
    m_measurement.reset(); // it measured another plan
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
    const auto choiceText = [](const Choice& c) { return schemeAndRoundingText(*c.first, c.second); };
    // Against the plan the user started from: a drag is one session (one undo step), so every position
    // it passes lists the change from where the drag began, not from the step before.
    if (m_changesSession != m_mergeSession) {
        m_changesSession = m_mergeSession;
        m_sessionStart.clear();
        if (const auto plan = m_controller->plan()) {
            for (const auto& m : plan->modules) {
                m_sessionStart[m.name] = m.decision == PlanDecision::Quantize && m.rounding
                                             ? Choice{m.scheme, m.rounding}
                                             : Choice{&keepScheme(), &rtnRounding()};
            }
        }
    }
    const auto& before = m_sessionStart;
    m_changes->setRowCount(0);
    for (const auto& choice : allocation.units) {
        const Choice now{choice.scheme, choice.scheme->quantizes() ? choice.rounding : &rtnRounding()};
        for (const auto& module : m_allocator->sweep().units[choice.unit].modules) {
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
    record.weightedError = allocation.point.loss;
    if (m_scores) {
        record.acceptanceLoss = allocation.point.loss;
        record.acceptanceLossKind = acceptanceLossName(m_scores->effects->loss);
        record.capture = m_scores->objective->inputs().capture.string();
        record.weightedError = 0;
        for (const auto& choice : allocation.units) {
            record.weightedError += choice.relErr * choice.relErr;
        }
    }
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
    m_appliedEdits = after;
    m_controller->edit(after,
                       tr("Budget %1 (%2 %3)")
                           .arg(localizedBytes(allocation.point.streamedBytes),
                                m_scores ? tr("loss") : tr("E"), errorText(allocation.point.loss)),
                       QStringLiteral("budget-%1").arg(m_mergeSession));
    m_controller->recomputeNow();
    updateSummary();
}

QString BudgetPanel::acceptanceText() const
{
    if (!m_scores) {
        return tr("Weight error does not predict acceptance: set a capture in the Acceptance tab and press "
                  "Score by Acceptance to choose plans by what they do to the draft's proposals.");
    }
    const auto& split = m_scores->objective->anchors();
    QString text = tr("Objective: %1 on %2 (k = %3; chosen on %4 anchors of even samples).")
                       .arg(lossDescription(),
                            QString::fromStdString(m_scores->objective->inputs().capture.filename().string()))
                       .arg(m_scores->objective->inputs().k)
                       .arg(split.confirm.size());
    if (m_measurement) {
        const auto interval = [](double mean, double low, double high) {
            return tr("%1 [%2, %3]")
                .arg(QLocale().toString(mean, 'f', 3), QLocale().toString(low, 'f', 3),
                     QLocale().toString(high, 'f', 3));
        };
        const auto& p = *m_measurement->plan;
        const auto& r = *m_measurement->recipe;
        const auto d = pairedDifference(p, r);
        text += QLatin1Char(' ') +
                tr("Held out (%1 anchors of odd samples): Δτ plan %2 (%3 streamed), recipe %4 (%5); plan − "
                   "recipe %6; the plan's loss %7 whole against %8 summed over its units.")
                    .arg(p.report.anchors)
                    .arg(interval(p.report.tauDelta, p.report.tauDeltaLow, p.report.tauDeltaHigh),
                         localizedBytes(p.streamedBytes),
                         interval(r.report.tauDelta, r.report.tauDeltaLow, r.report.tauDeltaHigh),
                         localizedBytes(r.streamedBytes), interval(d.mean, d.low, d.high),
                         errorText(m_scores->effects->lossOf(p.confirm)),
                         m_allocator && m_applied >= 0
                             ? errorText(m_allocator->frontier()[static_cast<std::size_t>(m_applied)].loss)
                             : tr("n/a"));
        const auto& f = m_measurement->numericsFloor;
        text += QLatin1Char(' ') +
                tr("Numerics floor (the BF16 draft with BF16 activations against FP32): Δτ %1, "
                   "first proposals changed %2 %.")
                    .arg(interval(f.tauDelta, f.tauDeltaLow, f.tauDeltaHigh),
                         QLocale().toString(100 * f.flipFirst, 'f', 2));
    }
    return text;
}

PlanEdits BudgetPanel::userEdits() const
{
    const auto& now = m_controller->edits();
    return m_appliedEdits && now == *m_appliedEdits ? m_baseEdits : now;
}

QString BudgetPanel::lossDescription() const
{
    if (!m_scores || m_scores->effects->loss == AcceptanceLoss::Kl) {
        return tr("KL(BF16 || plan) per proposal, summed over units and positions");
    }
    return tr("loss of the accepted length expected of the draft sampled at t = %1 (upper end of each "
              "unit's 95 % interval), summed over units")
        .arg(QLocale().toString(kObjectiveTemperature, 'f', 2));
}

QString BudgetPanel::summaryText() const
{
    return m_summary->text();
}

void BudgetPanel::updateSummary()
{
    if (!m_allocator) {
        m_summary->setText(m_job->isRunning()      ? tr("Sweeping…")
                           : m_scoring.isRunning() ? tr("Scoring by acceptance…")
                                                   : tr("Sweep the draft to see the exact trade-off between "
                                                        "streamed bytes and weighted error, then pick a "
                                                        "budget.") +
                                                         QLatin1Char(' ') + acceptanceText());
        return;
    }
    const auto& f = m_allocator->frontier();
    const int at = m_slider->value();
    QString text =
        m_scores
            ? tr("%1 frontier points (built in %2 ms), scored in %3 s.")
                  .arg(f.size())
                  .arg(QLocale().toString(m_allocator->buildSeconds() * 1e3, 'f', 1))
                  .arg(QLocale().toString(m_sweep->seconds + m_scores->effects->seconds, 'f', 1))
            : tr("%1 frontier points (built in %2 ms), sweep %3 s at %4 GB/s.")
                  .arg(f.size())
                  .arg(QLocale().toString(m_allocator->buildSeconds() * 1e3, 'f', 1))
                  .arg(QLocale().toString(m_sweep->seconds, 'f', 1))
                  .arg(QLocale().toString(m_sweep->seconds > 0 ? static_cast<double>(m_sweep->bytesMeasured) /
                                                                     m_sweep->seconds / 1e9
                                                               : 0.0,
                                          'f', 2));
    if (at >= 0 && at < static_cast<int>(f.size())) {
        text += QLatin1Char(' ') + tr("Budget point: %1 streamed, %2 on disk, %3 %4.")
                                       .arg(localizedBytes(f[static_cast<std::size_t>(at)].streamedBytes),
                                            localizedBytes(f[static_cast<std::size_t>(at)].bytes),
                                            m_scores ? tr("loss") : tr("E"),
                                            errorText(f[static_cast<std::size_t>(at)].loss));
    }
    text += QLatin1Char(' ') + acceptanceText();
    m_summary->setText(text);
}

} // namespace spark
