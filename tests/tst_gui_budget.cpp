// The budget allocator in the GUI: sweep in the background, the frontier plot, the budget slider applying
// plans as undoable edits, the per-unit sweep table in the tensor detail panel, and the chosen plan exported
// and verified through the GUI's export runner.
#include "core/forward/expectedacceptance.h"
#include "core/plan/planfile.h"
#include "core/quant/analyzer.h"
#include "guitesthelpers.h"
#include "views/acceptance/acceptancepanel.h"
#include "views/analysis/analysiscontroller.h"
#include "views/bench/benchplot.h"
#include "views/bench/benchplotqcp.h"
#include "views/document/document.h"
#include "views/export/exportrunner.h"
#include "views/plan/budgetpanel.h"
#include "views/plan/frontierplot.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planmodulemodel.h"
#include "views/plan/plantab.h"
#include "views/plan/sweepjob.h"
#include "views/shared/formatting.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensoritemmodel.h"
#include "views/tensors/tensorsview.h"
#include "views/tensors/tensorsweepsection.h"
#include "views/tensors/tensortablemodel.h"
#include "views/tensors/tensortreemodel.h"
#include "views/window/mainwindow.h"

#include <QAction>
#include <QCheckBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

using namespace spark;
using namespace spark::test;

class TestGuiBudget : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_draft;

    /// Every unit's modules carry the scheme the allocation at frontier point @p index gave them.
    static bool planMatches(const MainWindow& window, const BudgetPanel& panel, int index)
    {
        const auto* plan = window.planController()->exportablePlan();
        if (!plan) {
            return false;
        }
        const auto a = panel.allocator()->atFrontier(static_cast<std::size_t>(index));
        for (const auto& choice : a.units) {
            for (const auto& m : panel.sweep()->units[choice.unit].modules) {
                const auto* module = plan->findModule(m);
                if (!module || module->scheme != choice.scheme) {
                    return false;
                }
            }
        }
        return plan->sizes.streamedAfter == a.point.streamedBytes;
    }

    /// Runs the Budget tab's sweep and waits for it.
    static bool sweepAndWait(BudgetPanel* panel, int timeoutMs = 60000)
    {
        QSignalSpy finished(panel->sweepJob(), &SweepJob::finished);
        panel->startSweep();
        return finished.wait(timeoutMs);
    }

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_draft = writeTinyDemo(m_dir, "glm-dspark", QStringLiteral("glm"));
    }

    void scoresByAcceptanceOnTheTrainedDraft()
    {
        const auto trained = std::filesystem::path(SPARK_TEST_DATA) / "trained";
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, trained / "eagle3"));
        BudgetPanel* panel = window.budgetPanel();
        // Without a capture the tab says why weight error is not enough, and scoring asks for one.
        QVERIFY(panel->summaryText().contains(QStringLiteral("does not predict acceptance")));
        QSignalSpy status(panel, &BudgetPanel::statusMessage);
        panel->startScoring();
        QVERIFY(!panel->scores());
        QVERIFY(!status.isEmpty() &&
                status.last().at(0).toString().contains(QStringLiteral("needs a capture")));

        // The capture, target, k and anchors come from the Acceptance tab.
        auto* acceptance = window.findChild<AcceptancePanel*>();
        acceptance->captureEdit()->setText(QString::fromStdString((trained / "capture-hs").string()));
        acceptance->targetEdit()->setText(QString::fromStdString((trained / "target").string()));
        acceptance->kSpin()->setValue(2);
        acceptance->anchorsSpin()->setValue(32);
        // Esc stops the scoring too, and the bar goes back to empty.
        auto* cancel = window.findChild<QAction*>(QStringLiteral("cancelAction"));
        QVERIFY(cancel && !cancel->isEnabled());
        panel->startScoring();
        QVERIFY(cancel->isEnabled());
        panel->progressBar()->setFraction(0.92);
        cancel->trigger();
        QVERIFY(!panel->scores() && panel->scoreButton()->isEnabled());
        QCOMPARE(panel->progressBar()->value(), 0);
        QVERIFY(!cancel->isEnabled());
        panel->startScoring();
        QVERIFY(!panel->scoreButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(panel->scoreButton()->isEnabled(), 300000);
        QVERIFY2(panel->scores(), qPrintable(status.last().at(0).toString()));
        QCOMPARE(panel->scores()->objective->inputs().k, 2);
        QCOMPARE(panel->scores()->effects->confirmAnchors, std::int64_t{32});
        QCOMPARE(panel->scores()->effects->screenAnchors, std::int64_t{8});
        // EAGLE-3's own head is a unit here (vLLM loads it quantized through the exact entry lm_head).
        const auto& units = panel->sweep()->units;
        QVERIFY(std::any_of(units.begin(), units.end(), [](const SweepUnit& u) {
            return u.name == "lm_head" && u.candidates.size() > 1;
        }));
        // The frontier's loss is the target-aware objective at the draft temperature chosen, which the axis
        // and the summary name.
        const auto t = QLocale().toString(kObjectiveTemperature, 'f', 2);
        QVERIFY(panel->frontierPlot()->plot()->yAxis->label().contains(QStringLiteral("(t = %1)").arg(t)));
        QVERIFY(panel->summaryText().contains(QStringLiteral("Objective: loss of the accepted length")));

        // A budget point applies a plan whose record says it was chosen by acceptance on that capture.
        const int last = panel->budgetSlider()->maximum();
        QVERIFY(last > 2);
        panel->budgetSlider()->setValue(last / 2);
        QTRY_VERIFY(window.planController()->exportablePlan());
        const auto options = window.planController()->planOptions();
        QVERIFY(options.budget && options.budget->acceptanceLoss);
        QCOMPARE(options.budget->acceptanceLossKind, std::string("expected-acceptance"));
        QCOMPARE(*options.budget->acceptanceLoss, panel->allocator()->frontier()[last / 2].loss);
        QVERIFY(QString::fromStdString(options.budget->capture).endsWith(QStringLiteral("capture-hs")));

        // Measure Plan: the plan and the recipe on the held-out (odd) samples, paired.
        QVERIFY(panel->measureButton()->isEnabled());
        panel->startMeasuring();
        QTRY_VERIFY_WITH_TIMEOUT(panel->measurement(), 300000);
        const auto& m = *panel->measurement();
        QVERIFY(m.plan && m.recipe);
        QCOMPARE(m.plan->report.anchors, m.recipe->report.anchors);
        QVERIFY(m.plan->report.anchors > 100);
        QCOMPARE(m.plan->streamedBytes, panel->allocator()->frontier()[last / 2].streamedBytes);
        QVERIFY(panel->summaryText().contains(QStringLiteral("Held out")));
        QCOMPARE(m.numericsFloor.anchors, m.plan->report.anchors);
        QVERIFY2(panel->summaryText().contains(QStringLiteral("Numerics floor")),
                 qPrintable(panel->summaryText()));

        // Cancel stops a scoring run and keeps the scores there were.
        panel->startScoring();
        panel->cancelSweep();
        QVERIFY(panel->scoreButton()->isEnabled());
        QVERIFY(panel->scores());
    }

    void sliderAppliesPlansAndExportVerifies()
    {
        MainWindow window(quiet());
        QVERIFY(window.tabIds().contains(QStringLiteral("budget")));
        QVERIFY(openAndWait(window, m_draft));
        BudgetPanel* panel = window.budgetPanel();
        QVERIFY(!panel->budgetSlider()->isEnabled());
        // Before a sweep the plot says what to do instead of showing bare axes.
        QVERIFY(BenchPlot::emptyNote(*panel->frontierPlot()->plot()));
        // ... and no made-up axis numbers (QCustomPlot's default range showed -1..6).
        for (const auto* axis :
             {panel->frontierPlot()->plot()->xAxis, panel->frontierPlot()->plot()->yAxis}) {
            QVERIFY(!axis->tickLabels());
            QVERIFY(axis->range().lower >= 0);
        }

        // The sweep runs in the background and reports progress.
        QSignalSpy finished(panel->sweepJob(), &SweepJob::finished);
        QSignalSpy swept(panel, &BudgetPanel::sweepChanged);
        panel->startSweep();
        QVERIFY(panel->sweepJob()->isRunning());
        QVERIFY(finished.wait(60000));
        QCOMPARE(swept.count(), 1);
        QVERIFY(panel->sweep());
        QVERIFY(panel->allocator());
        const int points = static_cast<int>(panel->allocator()->frontier().size());
        QVERIFY(points > 3);
        QCOMPARE(panel->budgetSlider()->maximum(), points - 1);
        QCOMPARE(panel->frontierPlot()->frontierPointCount(), points);
        // The frontier, the presets that fit this sweep and the current plan are drawn.
        QVERIFY(panel->frontierPlot()->plot()->graphCount() >= 3);
        QVERIFY(!BenchPlot::emptyNote(*panel->frontierPlot()->plot()));
        for (const auto* axis :
             {panel->frontierPlot()->plot()->xAxis, panel->frontierPlot()->plot()->yAxis}) {
            QVERIFY(axis->tickLabels());
            // Bytes, milliseconds and errors are never negative: at most the padding below a point on zero.
            QVERIFY(axis->range().lower >= -0.06 * axis->range().size());
        }

        // The detail panel shows the sweep of the current tensor's unit.
        const auto& unit = panel->sweep()->units.back();
        QVERIFY(window.tensorsView()->selectTensor(QString::fromStdString(unit.weights.front())));
        QCOMPARE(window.tensorSweepSection()->table()->rowCount(), static_cast<int>(unit.candidates.size()));
        QVERIFY(window.tensorSweepSection()->unitText().contains(QString::fromStdString(unit.name)));

        // Moving the slider applies that frontier point's plan as one undoable edit.
        QUndoStack* undo = window.planController()->undoStack();
        const int undoBefore = undo->count();
        const auto editsBefore = window.planController()->edits();
        const int target = points / 3;
        const int other = (2 * points) / 3;
        panel->budgetSlider()->setValue(target == panel->budgetSlider()->value() ? target + 1 : target);
        const int applied = panel->appliedPoint();
        QVERIFY(applied >= 0);
        QVERIFY(planMatches(window, *panel, applied));
        QCOMPARE(undo->count(), undoBefore + 1);
        QVERIFY(panel->changesTable()->rowCount() > 0);

        // A drag is one undo step, and what it changed is listed against the plan it started from.
        window.planController()->recomputeNow();
        const auto start = window.planController()->plan();
        panel->budgetSlider()->setSliderDown(true);
        Q_EMIT panel->budgetSlider()->sliderPressed();
        panel->budgetSlider()->setValue(other);
        window.planController()->recomputeNow();
        panel->budgetSlider()->setValue(other + 1 < points ? other + 1 : other - 1);
        panel->budgetSlider()->setSliderDown(false);
        QCOMPARE(undo->count(), undoBefore + 2);
        QVERIFY(planMatches(window, *panel, panel->appliedPoint()));
        QStringList changed;
        for (const auto& m : window.planController()->plan()->modules) {
            const auto* was = start->findModule(m.name);
            const bool quantNow = m.decision == PlanDecision::Quantize;
            const bool quantWas = was->decision == PlanDecision::Quantize;
            if (quantNow != quantWas ||
                (quantNow && (m.scheme != was->scheme || m.rounding != was->rounding))) {
                changed.append(QString::fromStdString(m.name));
            }
        }
        QStringList listed;
        for (int row = 0; row < panel->changesTable()->rowCount(); ++row) {
            listed.append(panel->changesTable()->item(row, 0)->text());
            const auto* was = start->findModule(listed.back().toStdString());
            const QString before = panel->changesTable()->item(row, 1)->text();
            QVERIFY2(before.startsWith(
                         schemeText(was->decision == PlanDecision::Quantize ? *was->scheme : keepScheme())),
                     qPrintable(listed.back() + QStringLiteral(": ") + before));
        }
        changed.sort();
        listed.sort();
        QCOMPARE(listed, changed);

        // α handed over (the Acceptance tab's "Use as α") solves the point in use again, at its bytes.
        {
            const auto budget =
                panel->allocator()->frontier()[static_cast<std::size_t>(panel->appliedPoint())];
            const int index = undo->index();
            panel->setExternalAlphas({QStringLiteral("re:.*down_proj$=50")}, QStringLiteral("a test"));
            window.planController()->recomputeNow();
            QVERIFY(panel->appliedPoint() >= 0);
            QVERIFY(planMatches(window, *panel, panel->appliedPoint()));
            QVERIFY(panel->allocator()
                        ->frontier()[static_cast<std::size_t>(panel->appliedPoint())]
                        .streamedBytes <= budget.streamedBytes);
            QCOMPARE(undo->index(), index + 1); // one undo step
            // Back to the drag's plan and the weights without α, for the steps below.
            panel->setExternalAlphas({}, QString());
            undo->setIndex(index);
            window.planController()->recomputeNow();
        }

        // Undo goes back to the first application, then to the plan before any budget.
        undo->undo();
        window.planController()->recomputeNow();
        QVERIFY(planMatches(window, *panel, applied));
        undo->undo();
        window.planController()->recomputeNow();
        QVERIFY(window.planController()->edits() == editsBefore);
        undo->redo();
        window.planController()->recomputeNow();
        QVERIFY(planMatches(window, *panel, applied));

        // Clicking a frontier point applies it too.
        window.show();
        window.showTab(QStringLiteral("budget"));
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCustomPlot* plot = panel->frontierPlot()->plot();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const int clicked = points - 1;
        const auto& p = panel->allocator()->frontier()[static_cast<std::size_t>(clicked)];
        const QPoint pixel(static_cast<int>(plot->xAxis->coordToPixel(panel->frontierPlot()->xOf(p))),
                           static_cast<int>(plot->yAxis->coordToPixel(p.loss)));
        QSignalSpy pointClicked(panel->frontierPlot(), &FrontierPlot::pointClicked);
        QTest::mouseClick(plot, Qt::LeftButton, {}, pixel);
        QCOMPARE(pointClicked.count(), 1);
        QCOMPARE(pointClicked.first().first().toInt(), clicked);
        QCOMPARE(panel->appliedPoint(), clicked);
        QVERIFY(planMatches(window, *panel, clicked));

        // Role priors change α and so the frontier's errors.
        const double eBefore = panel->allocator()->frontier().front().loss;
        panel->rolePriorsBox()->setChecked(true);
        QVERIFY(panel->allocator()->frontier().front().loss != eBefore);

        // Export the plan the slider chose through the GUI's runner, verify included.
        panel->budgetSlider()->setValue(target);
        QVERIFY(planMatches(window, *panel, panel->appliedPoint()));
        ExportRunner runner;
        QSignalSpy done(&runner, &ExportRunner::finished);
        ExportRequest request;
        request.source = window.document()->snapshot()->checkpoint;
        request.plan = *window.planController()->exportablePlan();
        request.output = m_dir.filePath(QStringLiteral("budget-export"));
        QVERIFY(runner.start(request));
        QVERIFY(done.wait(120000));
        const auto outcome = done.first().first().value<ExportOutcome>();
        QVERIFY2(outcome.status == ExportOutcome::Status::Succeeded, qPrintable(outcome.error));
        QVERIFY(outcome.verify.has_value());
        QVERIFY2(outcome.verify->ok(), outcome.verify->summary().c_str());
        QVERIFY(outcome.verify->bitExactModules > 0);

        // An applied point is a plan, not a set of pins: sweeping again starts from the user's own rules,
        // so the whole frontier comes back (one point only, when the point's rules were read as pins) and
        // the presets are drawn under the user's rules alone.
        {
            const auto frontierBefore = panel->allocator()->frontier().size();
            const auto userRules = panel->sweep()->plan.schemes;
            const auto appliedEdits = window.planController()->edits();
            QVERIFY(appliedEdits.schemes.size() > static_cast<qsizetype>(userRules.size()));
            QVERIFY(sweepAndWait(panel));
            QCOMPARE(panel->allocator()->frontier().size(), frontierBefore);
            QVERIFY(panel->sweep()->plan.schemes == userRules);
            QVERIFY(window.planController()->edits() == appliedEdits); // the plan in use stays
        }
        panel->budgetSlider()->setValue(target == panel->budgetSlider()->value() ? target + 1 : target);
        panel->budgetSlider()->setValue(target);

        // The plan carries its budget as a record, saved in the plan file and read back; another edit of
        // the plan drops it (the record describes the allocation's rules only).
        const auto options = window.planController()->planOptions();
        QVERIFY(options.budget.has_value());
        const auto& point = panel->allocator()->frontier()[static_cast<std::size_t>(panel->appliedPoint())];
        QCOMPARE(options.budget->budgetBytes, point.streamedBytes);
        QCOMPARE(options.budget->weightedError, point.loss);
        QVERIFY(!options.budget->alpha.empty()); // role priors are on
        const auto file =
            std::filesystem::path(m_dir.filePath(QStringLiteral("budget-plan.json")).toStdString());
        writePlanFile(file, options);
        QVERIFY(readPlanFile(file).budget == options.budget);
        window.planController()->addEntry(EntryKind::Scheme, QStringLiteral("re:.*down_proj=W8A16"));
        QVERIFY(!window.planController()->planOptions().budget.has_value());
    }

    // After a budget plan every quantized module's Rel. error is its planned scheme's, exactly what
    // `analyze --scheme` of that scheme gives (a fused set: its members' sums together), not the analysis
    // bar's W4A16; without a sweep or a matching analysis the cell names the scheme not measured yet.
    // The frontier draws the presets of the draft's own architecture (and those for any draft) only: a DSpark
    // recipe on an EAGLE-3 head matches nothing and would be drawn as the empty plan.
    void presetsOfOtherArchitecturesAreNotDrawn()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, test::dataPath("trained") / "eagle3"));
        BudgetPanel* panel = window.budgetPanel();
        QVERIFY(sweepAndWait(panel));
        QStringList labels;
        for (const auto& marker : panel->frontierPlot()->markers()) {
            labels.append(marker.label);
        }
        const QString all = labels.join(QStringLiteral(" | "));
        QVERIFY2(all.contains(QStringLiteral("eagle3")) && all.contains(QStringLiteral("none")),
                 qPrintable(all));
        for (const char* other : {"glm-dspark", "laguna-dflash", "qwen3-dflash"}) {
            QVERIFY2(!all.contains(QLatin1String(other)), qPrintable(all));
        }
    }

    void plannedSchemeErrors()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        BudgetPanel* panel = window.budgetPanel();
        QVERIFY(sweepAndWait(panel));
        const int points = static_cast<int>(panel->allocator()->frontier().size());
        const WeightScheme* analysisScheme = &window.analysisController()->scheme();
        // The frontier point with most schemes other than the analysis bar's: the case the column got wrong.
        int best = -1;
        std::size_t bestOthers = 0;
        for (int i = 0; i < points; ++i) {
            std::set<const WeightScheme*> others;
            for (const auto& choice : panel->allocator()->atFrontier(static_cast<std::size_t>(i)).units) {
                if (choice.scheme->quantizes() && choice.scheme != analysisScheme) {
                    others.insert(choice.scheme);
                }
            }
            if (best < 0 || others.size() > bestOthers) {
                best = i;
                bestOthers = others.size();
            }
        }
        QVERIFY(bestOthers > 0);
        if (panel->budgetSlider()->value() == best) { // setValue() of the same value applies nothing
            panel->budgetSlider()->setValue(best == 0 ? 1 : best - 1);
        }
        panel->budgetSlider()->setValue(best);
        window.planController()->recomputeNow();
        QVERIFY(planMatches(window, *panel, panel->appliedPoint()));
        const auto plan = window.planController()->plan();
        QVERIFY(plan);

        // What `analyze --scheme S` says for each scheme the plan uses, by tensor.
        const auto checkpoint = Checkpoint::open(m_draft.toStdString());
        std::map<std::string, std::string> fusedSetOf;
        for (const auto& m : plan->modules) {
            fusedSetOf[m.weightTensor] = m.vllmName;
        }
        std::map<const WeightScheme*, std::map<std::string, TensorErrorStats>> analyzed;
        for (const auto* scheme : plan->schemesUsed()) {
            AnalyzeOptions options;
            options.scheme = scheme;
            options.fusedSetOf = fusedSetOf;
            for (const auto& t : analyzeCheckpoint(checkpoint, options)) {
                if (t.stats) {
                    analyzed[scheme][t.name] = *t.stats;
                }
            }
        }
        PlanModuleModel* model = window.planTab()->moduleModel();
        int checked = 0;
        for (const auto& m : plan->modules) {
            if (m.decision != PlanDecision::Quantize) {
                continue;
            }
            double sqNorm = 0;
            double sqErr = 0;
            for (const auto& other : plan->modules) {
                if (other.vllmName == m.vllmName) { // the module itself, or every member of its fused set
                    const auto& stats = analyzed[m.scheme].at(other.weightTensor);
                    sqNorm += stats.sqNorm;
                    sqErr += stats.sqErr.value_or(0.0);
                }
            }
            const double expected = std::sqrt(sqErr / sqNorm);
            const int row = model->rowOf(QString::fromStdString(m.name));
            QVERIFY(row >= 0);
            const auto shown = model->relError(row);
            QVERIFY2(shown, m.name.c_str());
            QVERIFY2(std::abs(*shown - expected) <= 1e-9 * std::max(1.0, expected),
                     qPrintable(QStringLiteral("%1 (%2): shown %3, analyze %4")
                                    .arg(QString::fromStdString(m.name), schemeText(*m.scheme))
                                    .arg(*shown)
                                    .arg(expected)));
            QCOMPARE(model->errorScheme(row), m.scheme);
            // The tensors view shows the same error on the module's weight, in the flat list and the tree
            // (no analysis ran: every quantized module's error is the sweep's, of its fused set).
            for (TensorItemModel* tensors :
                 {static_cast<TensorItemModel*>(window.tensorsView()->flatModel()),
                  static_cast<TensorItemModel*>(window.tensorsView()->treeModel())}) {
                const QModelIndex cell = tensors->indexOfTensor(QString::fromStdString(m.weightTensor))
                                             .siblingAtColumn(TensorColumns::RelError);
                const QVariant value = cell.data(TensorColumns::SortRole);
                QVERIFY2(value.isValid(), m.weightTensor.c_str());
                QVERIFY2(std::abs(value.toDouble() - expected) <= 1e-9 * std::max(1.0, expected),
                         qPrintable(QStringLiteral("tensors view, %1 (%2): shown %3, analyze %4")
                                        .arg(QString::fromStdString(m.weightTensor), schemeText(*m.scheme))
                                        .arg(value.toDouble())
                                        .arg(expected)));
                QCOMPARE(cell.data().toString(), formatRelError(expected));
                QVERIFY2(cell.data(Qt::ToolTipRole).toString().contains(schemeText(*m.scheme)),
                         qPrintable(cell.data(Qt::ToolTipRole).toString()));
            }
            ++checked;
        }
        QVERIFY(checked > 0);

        // Without the sweep, modules planned for another scheme than the analysis' say so.
        model->setSweep(nullptr);
        int unmeasured = 0;
        for (const auto& m : plan->modules) {
            if (m.decision == PlanDecision::Quantize && m.scheme != analysisScheme) {
                const int row = model->rowOf(QString::fromStdString(m.name));
                QCOMPARE(model->unmeasuredScheme(row), m.scheme);
                QVERIFY(!model->relError(row));
                const auto text = model->index(row, PlanModuleModel::RelError).data().toString();
                QVERIFY2(text.contains(schemeText(*m.scheme)), qPrintable(text));
                ++unmeasured;
            }
        }
        QVERIFY(unmeasured > 0);

        // The tensors view without the sweep: no analysis either, so every quantized weight says which
        // scheme is not measured, and a kept one says nothing.
        TensorsView* tensors = window.tensorsView();
        tensors->setSweep(nullptr);
        const auto tensorCell = [&](const std::string& tensor) {
            return tensors->flatModel()
                ->indexOfTensor(QString::fromStdString(tensor))
                .siblingAtColumn(TensorColumns::RelError);
        };
        for (const auto& m : plan->modules) {
            if (!m.isLinear()) {
                continue;
            }
            const QString text = tensorCell(m.weightTensor).data().toString();
            if (m.decision == PlanDecision::Quantize) {
                QCOMPARE(text, QStringLiteral("not measured: %1").arg(schemeText(*m.scheme)));
            } else {
                QVERIFY2(text.isEmpty(), qPrintable(text));
            }
        }

        // After analyze (F5) every planned module shows the analysis' error of its weight under its planned
        // scheme and rounding (mixed plan included), the kept ones the toolbar's scheme. The expected values
        // are core analyze's with the plan's schemes per tensor, each tensor alone as the job measures it.
        QVERIFY(analyzeAndWait(window));
        AnalyzeOptions options;
        options.scheme = analysisScheme;
        std::set<const WeightScheme*> planned;
        for (const auto* m : plan->quantizedModules()) {
            options.tensorSchemes[m->weightTensor] = m->scheme;
            options.tensorRoundings[m->weightTensor] = m->rounding ? m->rounding : &rtnRounding();
            planned.insert(m->scheme);
        }
        QVERIFY2(planned.size() > 1 || !planned.contains(analysisScheme), "the budget plan is not mixed");
        std::map<std::string, double> own;
        for (const auto& t : analyzeCheckpoint(checkpoint, options)) {
            if (t.stats && t.stats->relErr) {
                own[t.name] = *t.stats->relErr;
            }
        }
        int measured = 0;
        for (const auto& m : plan->modules) {
            if (!m.isLinear()) {
                continue;
            }
            const QModelIndex cell = tensorCell(m.weightTensor);
            const auto it = own.find(m.weightTensor);
            if (it == own.end()) { // not analyzable under the toolbar's scheme
                QVERIFY(m.decision != PlanDecision::Quantize);
                continue;
            }
            const double expected = it->second;
            QVERIFY2(std::abs(cell.data(TensorColumns::SortRole).toDouble() - expected) <=
                         1e-9 * std::max(1.0, expected),
                     qPrintable(QString::fromStdString(m.weightTensor) + QStringLiteral(": ") +
                                cell.data().toString()));
            measured += m.decision == PlanDecision::Quantize && m.scheme != analysisScheme;
            const int row = model->rowOf(QString::fromStdString(m.name));
            QVERIFY2(!model->unmeasuredScheme(row), m.name.c_str());
            if (m.decision == PlanDecision::Quantize) {
                QCOMPARE(model->errorScheme(row), m.scheme);
            }
        }
        QVERIFY(measured > 0); // modules planned under another scheme than the toolbar's were measured
    }

    // At the default window size the "what changed" table shows at least five rows and scheme names in full.
    void changesTableReadsAt1200x700()
    {
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.showTab(QStringLiteral("budget")));
        BudgetPanel* panel = window.budgetPanel();
        QVERIFY(sweepAndWait(panel));
        // From the cheapest plan to the most accurate one: many units change at once.
        panel->budgetSlider()->setValue(0);
        panel->budgetSlider()->setValue(panel->budgetSlider()->maximum());
        QTableWidget* table = panel->changesTable();
        QVERIFY(table->rowCount() >= 5);
        QCoreApplication::processEvents();
        const QRect viewport = table->viewport()->rect();
        for (int row = 0; row < 5; ++row) {
            QVERIFY2(viewport.contains(table->visualItemRect(table->item(row, 0))),
                     qPrintable(QStringLiteral("row %1 is cut off").arg(row)));
        }
        const QFontMetrics metrics(table->font());
        for (int row = 0; row < table->rowCount(); ++row) {
            for (int column = 1; column < table->columnCount(); ++column) {
                const QString text = table->item(row, column)->text();
                QVERIFY2(metrics.horizontalAdvance(text) < table->columnWidth(column),
                         qPrintable(QStringLiteral("'%1' is elided").arg(text)));
            }
        }
    }

    // "Also search rounding" sweeps every candidate under mse and range too: a frontier point's plan carries
    // the chosen rounding per unit as --rounding rules, the budget record names the methods searched, and the
    // module table and the tensors view show the error of the planned (scheme, rounding).
    void searchRoundingAppliesRoundingRules()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        BudgetPanel* panel = window.budgetPanel();
        QVERIFY(!panel->searchRoundingBox()->isChecked()); // a plain sweep stays as fast as before
        panel->searchRoundingBox()->setChecked(true);
        QVERIFY(sweepAndWait(panel, 120000));
        QVERIFY(panel->sweep());
        QCOMPARE(panel->sweep()->roundings.size(), std::size_t(3));

        // The point within the preset's bytes: same bytes, lower error, some unit rounded by a search.
        const auto* preset = window.planController()->exportablePlan();
        QVERIFY(preset);
        const auto index = panel->allocator()->bestWithin(preset->sizes.streamedAfter);
        QVERIFY(index.has_value());
        panel->applyPoint(static_cast<int>(*index));
        const auto allocation = panel->allocator()->atFrontier(*index);
        QVERIFY(!allocation.roundingRules.empty());
        const auto options = window.planController()->planOptions();
        for (const auto& rule : allocation.roundingRules) {
            QVERIFY2(std::find(options.roundings.begin(), options.roundings.end(), rule) !=
                         options.roundings.end(),
                     rule.c_str());
        }
        QVERIFY(options.budget.has_value());
        QCOMPARE(options.budget->roundingCandidates, (std::vector<std::string>{"mse", "range"}));

        const auto* plan = window.planController()->exportablePlan();
        QVERIFY(plan);
        PlanModuleModel* model = window.planTab()->moduleModel();
        int searched = 0;
        for (const auto& choice : allocation.units) {
            const auto& unit = panel->sweep()->units[choice.unit];
            for (const auto& name : unit.modules) {
                const auto* m = plan->findModule(name);
                QVERIFY(m);
                QCOMPARE(m->scheme, choice.scheme);
                if (!choice.scheme->quantizes()) {
                    continue;
                }
                QCOMPARE(m->rounding, choice.rounding);
                const auto shown = model->relError(model->rowOf(QString::fromStdString(name)));
                QVERIFY2(shown, name.c_str());
                QCOMPARE(*shown, unit.candidate(choice.scheme, choice.rounding)->relErr);
                if (choice.rounding != &rtnRounding()) {
                    ++searched;
                    const QModelIndex cell = static_cast<TensorItemModel*>(window.tensorsView()->flatModel())
                                                 ->indexOfTensor(QString::fromStdString(m->weightTensor))
                                                 .siblingAtColumn(TensorColumns::RelError);
                    QCOMPARE(cell.data(TensorColumns::SortRole).toDouble(),
                             unit.candidate(choice.scheme, choice.rounding)->relErr);
                }
            }
        }
        QVERIFY(searched > 0);
        // The changes table names the rounding a unit took.
        bool named = false;
        for (int row = 0; row < panel->changesTable()->rowCount(); ++row) {
            named = named || panel->changesTable()->item(row, 2)->text().contains(QStringLiteral(" · "));
        }
        QVERIFY(named);
    }

    // Another draft: the changes table, the frontier and the summary of the first one do not stay behind.
    void anotherDraftClearsTheChanges()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        BudgetPanel* panel = window.budgetPanel();
        QVERIFY(sweepAndWait(panel));
        panel->budgetSlider()->setValue(0);
        panel->budgetSlider()->setValue(panel->budgetSlider()->maximum());
        QVERIFY(panel->changesTable()->rowCount() > 0);
        QVERIFY(panel->summaryText().contains(QStringLiteral("frontier points")));

        const QString other = writeTinyDemo(m_dir, "laguna-dflash", QStringLiteral("laguna-other"));
        QVERIFY(openAndWait(window, other));
        QCOMPARE(panel->changesTable()->rowCount(), 0);
        QVERIFY(!panel->sweep());
        QCOMPARE(panel->frontierPlot()->frontierPointCount(), 0);
        QCOMPARE(panel->appliedPoint(), -1);
        QVERIFY(!panel->budgetSlider()->isEnabled());
        QVERIFY2(!panel->summaryText().contains(QStringLiteral("frontier points")),
                 qPrintable(panel->summaryText()));
    }

    void cancelAndReopen()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        BudgetPanel* panel = window.budgetPanel();
        QSignalSpy finished(panel->sweepJob(), &SweepJob::finished);
        panel->startSweep();
        panel->cancelSweep();
        QCOMPARE(finished.count(), 1);
        QVERIFY(!finished.first().first().value<SweepJobResult>().sweep);
        QVERIFY(!panel->sweep());
        QVERIFY(!panel->budgetSlider()->isEnabled());
        // A result of the cancelled run must not arrive later.
        QTest::qWait(300);
        QCOMPARE(finished.count(), 1);
        QVERIFY(!panel->sweep());
    }
};

QTEST_MAIN(TestGuiBudget)
#include "tst_gui_budget.moc"
