// The budget allocator in the GUI: sweep in the background, the frontier plot, the budget slider applying
// plans as undoable edits, the per-unit sweep table in the tensor detail panel, and the chosen plan exported
// and verified through the GUI's export runner.
#include "core/plan/planfile.h"
#include "guitesthelpers.h"
#include "views/bench/benchplot.h"
#include "views/bench/benchplotqcp.h"
#include "views/document/document.h"
#include "views/export/exportrunner.h"
#include "views/plan/budgetpanel.h"
#include "views/plan/frontierplot.h"
#include "views/plan/plancontroller.h"
#include "views/plan/sweepjob.h"
#include "views/tensors/tensorsview.h"
#include "views/tensors/tensorsweepsection.h"
#include "views/window/mainwindow.h"

#include <QCheckBox>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <filesystem>

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

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_draft = writeTinyDemo(m_dir, "glm-dspark", QStringLiteral("glm"));
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

        // A drag is one undo step.
        panel->budgetSlider()->setSliderDown(true);
        Q_EMIT panel->budgetSlider()->sliderPressed();
        panel->budgetSlider()->setValue(other);
        panel->budgetSlider()->setValue(other + 1 < points ? other + 1 : other - 1);
        panel->budgetSlider()->setSliderDown(false);
        QCOMPARE(undo->count(), undoBefore + 2);
        QVERIFY(planMatches(window, *panel, panel->appliedPoint()));

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
                           static_cast<int>(plot->yAxis->coordToPixel(p.weightedError)));
        QSignalSpy pointClicked(panel->frontierPlot(), &FrontierPlot::pointClicked);
        QTest::mouseClick(plot, Qt::LeftButton, {}, pixel);
        QCOMPARE(pointClicked.count(), 1);
        QCOMPARE(pointClicked.first().first().toInt(), clicked);
        QCOMPARE(panel->appliedPoint(), clicked);
        QVERIFY(planMatches(window, *panel, clicked));

        // Role priors change α and so the frontier's errors.
        const double eBefore = panel->allocator()->frontier().front().weightedError;
        panel->rolePriorsBox()->setChecked(true);
        QVERIFY(panel->allocator()->frontier().front().weightedError != eBefore);

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

        // The plan carries its budget as a record, saved in the plan file and read back; another edit of
        // the plan drops it (the record describes the allocation's rules only).
        const auto options = window.planController()->planOptions();
        QVERIFY(options.budget.has_value());
        const auto& point = panel->allocator()->frontier()[static_cast<std::size_t>(panel->appliedPoint())];
        QCOMPARE(options.budget->budgetBytes, point.streamedBytes);
        QCOMPARE(options.budget->weightedError, point.weightedError);
        QVERIFY(!options.budget->alpha.empty()); // role priors are on
        const auto file =
            std::filesystem::path(m_dir.filePath(QStringLiteral("budget-plan.json")).toStdString());
        writePlanFile(file, options);
        QVERIFY(readPlanFile(file).budget == options.budget);
        window.planController()->addEntry(EntryKind::Scheme, QStringLiteral("re:.*down_proj=W8A16"));
        QVERIFY(!window.planController()->planOptions().budget.has_value());
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
