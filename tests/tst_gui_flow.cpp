// The whole desktop flow on the tiny glm-dspark demo, through the main window as a user drives it:
// open → filter → toggle a module → preview updates → analyze (F5) completes → cancel → an invalid regex
// blocks export → undo restores; plus the screenshot of the Plan tab after analysis.
#include "core/plan/quantplan.h"
#include "core/quant/quantbackend.h"
#include "guitesthelpers.h"
#include "views/analysis/analysiscontroller.h"
#include "views/analysis/analysisjob.h"
#include "views/analysis/analysispanel.h"
#include "views/document/document.h"
#include "views/plan/lintmodel.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentryeditor.h"
#include "views/plan/planentrylistmodel.h"
#include "views/plan/planmodulemodel.h"
#include "views/plan/plantab.h"
#include "views/plan/summarybar.h"
#include "views/shared/formatting.h"
#include "views/tensors/histogramplot.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensorerrorsection.h"
#include "views/tensors/tensorfilterproxymodel.h"
#include "views/tensors/tensorplansection.h"
#include "views/tensors/tensorsview.h"
#include "views/tensors/tensortablemodel.h"
#include "views/tensors/tensortreemodel.h"
#include "views/window/mainwindow.h"
#include "views/window/screenshot.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QComboBox>
#include <QImage>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>
#include <map>

using namespace spark;
using namespace spark::test;

namespace {

// analyze measures 2-D BF16/F16/F32 `.weight` tensors whose columns divide by the group.
bool eligible(const TensorRow& row, int group)
{
    const bool floatType = row.dtype == QStringLiteral("BF16") || row.dtype == QStringLiteral("F16") ||
                           row.dtype == QStringLiteral("F32");
    return floatType && row.shape.size() == 2 && row.name.endsWith(QStringLiteral(".weight")) &&
           row.shape[0] > 0 && (group < 0 || row.shape[1] % static_cast<std::uint64_t>(group) == 0);
}

} // namespace

class TestGuiFlow : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    QString m_draft;

    static QAction* action(MainWindow& window, const char* name)
    {
        return window.findChild<QAction*>(QString::fromLatin1(name));
    }

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_draft = writeTinyDemo(m_dir, "glm-dspark", QStringLiteral("glm"));
    }

    void fullFlow()
    {
        MainWindow window(quiet());
        QVERIFY(window.tabIds().contains(QStringLiteral("plan")));
        QVERIFY(!window.currentPlan());
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.currentPlan());
        PlanTab* plan = window.planTab();
        QAbstractItemModelTester moduleTester(plan->moduleModel(),
                                              QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester lintTester(plan->lintModel(),
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester ignoreTester(plan->rulesEditor()->model(PlanList::Ignore),
                                              QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto snapshot = window.document()->snapshot();

        // Filter.
        QVERIFY(window.tensorsView()->setFilter(QStringLiteral("mlp"), false));
        const int shown = window.tensorsView()->proxyModel()->acceptedTensorCount();
        QVERIFY(shown > 0 && shown < static_cast<int>(snapshot->rows.size()));

        // Toggle a module from the plan's modules table: the preview (decision, sizes) follows.
        QString toggled;
        for (const auto& m : window.currentPlan()->modules) {
            if (m.isLinear() && m.decision == PlanDecision::Quantize) {
                toggled = QString::fromStdString(m.name);
                break;
            }
        }
        QVERIFY(!toggled.isEmpty());
        const QString sizeBefore = plan->summaryBar()->sizeText();
        QSignalSpy planChanged(&window, &MainWindow::planChanged);
        PlanModuleModel* modules = plan->moduleModel();
        QVERIFY(modules->setData(modules->index(modules->rowOf(toggled), PlanModuleModel::Decision),
                                 Qt::Unchecked, Qt::CheckStateRole));
        QVERIFY(planChanged.count() > 0);
        QCOMPARE(window.currentPlan()->findModule(toggled.toStdString())->decision, PlanDecision::Keep);
        QVERIFY(plan->summaryBar()->sizeText() != sizeBefore);
        const QString weight =
            QString::fromStdString(window.currentPlan()->findModule(toggled.toStdString())->weightTensor);
        QCOMPARE((*window.document()->analysis())[static_cast<std::size_t>(snapshot->rowOf(weight))].decision,
                 QStringLiteral("keep"));
        QVERIFY(window.tensorsView()->selectTensor(weight));
        QVERIFY2(window.tensorPlanSection()->decisionText().startsWith(QStringLiteral("keep")),
                 qPrintable(window.tensorPlanSection()->decisionText()));
        QVERIFY(!window.tensorPlanSection()->vllmNameText().isEmpty());

        // Analyze with F5: every eligible tensor gets a rel. error, streamed while the job runs.
        AnalysisPanel* controls = window.analysisPanel();
        AnalysisController* analysis = window.analysisController();
        // CPU always; CUDA only where a device can run it (the job then computes there).
        QCOMPARE(controls->backendBox()->itemData(0).toString(), QStringLiteral("cpu"));
        QTRY_COMPARE(controls->backendBox()->count(), cudaAvailable() ? 2 : 1); // probed in the background
        QSignalSpy finished(analysis, &AnalysisController::finished);
        QSignalSpy streamed(analysis, &AnalysisController::tensorAnalyzed);
        QAction* analyze = action(window, "analyzeAction");
        QVERIFY(analyze);
        QCOMPARE(analyze->shortcut(), QKeySequence(Qt::Key_F5));
        analyze->trigger();
        QVERIFY(analysis->isRunning());
        QVERIFY(action(window, "cancelAction")->isEnabled());
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.front().front().toBool(), false);
        int expected = 0;
        for (std::size_t i = 0; i < snapshot->rows.size(); ++i) {
            const auto& entry = (*window.document()->analysis())[i];
            if (eligible(snapshot->rows[i], 128)) {
                ++expected;
                QVERIFY2(entry.relError.has_value(), qPrintable(snapshot->rows[i].name));
                QVERIFY(entry.maxError.has_value());
                QVERIFY(*entry.relError > 0 && *entry.relError < 0.5);
            } else {
                QVERIFY2(!entry.relError, qPrintable(snapshot->rows[i].name));
            }
            // Re-running analyze cleared the table; the plan's decisions came back.
            QVERIFY(!entry.decision.isEmpty());
        }
        QVERIFY(expected > 0);
        QCOMPARE(streamed.count(), expected);
        QCOMPARE(analysis->resultCount(), expected);
        QVERIFY(!action(window, "cancelAction")->isEnabled());
        // The detail panel shows the numbers and both histograms of the current tensor.
        QVERIFY(window.tensorErrorSection()->statsText().startsWith(QStringLiteral("Rel. error")));
        QCOMPARE(window.tensorErrorSection()->weightPlot()->barCount(), 64);
        QCOMPARE(window.tensorErrorSection()->errorPlot()->barCount(), 64);

        // The toolbar's scheme is the plan's default scheme: changing it is an undoable plan edit that runs
        // nothing (the Plan tab's Default scheme follows); F5 measures every module under the scheme the plan
        // gives it; undo brings the default back, and its results without re-running.
        const auto resultsW4 = analysis->resultCount();
        controls->schemeBox()->setCurrentIndex(controls->schemeBox()->findData(QStringLiteral("W8A16")));
        QVERIFY(!analysis->isRunning());
        QCOMPARE(analysis->resultCount(), 0);
        QCOMPARE(window.planController()->edits().defaultScheme, QStringLiteral("W8A16"));
        QCOMPARE(plan->defaultSchemeBox()->currentData().toString(), QStringLiteral("W8A16"));
        window.planController()->recomputeNow();
        QCOMPARE(schemeText(*window.currentPlan()->defaultScheme), QStringLiteral("W8A16"));
        std::map<std::string, const WeightScheme*> planned; // weight tensor -> the plan's scheme
        for (const auto* m : window.currentPlan()->quantizedModules()) {
            QCOMPARE(schemeText(*m->scheme), QStringLiteral("W8A16")); // the demo plan has no scheme rules
            planned[m->weightTensor] = m->scheme;
        }
        finished.clear();
        streamed.clear();
        analyze->trigger();
        QVERIFY(analysis->isRunning());
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.front().front().toBool(), false);
        QCOMPARE(analysis->resultCount(), resultsW4);
        for (const auto& [tensor, scheme] : planned) {
            const auto* result = analysis->result(QString::fromStdString(tensor));
            QVERIFY2(result && result->scheme == scheme, tensor.c_str());
        }
        window.planController()->undoStack()->undo();
        QCOMPARE(window.planController()->edits().defaultScheme, QStringLiteral("W4A16"));
        QCOMPARE(controls->schemeBox()->currentData().toString(), QStringLiteral("W4A16"));
        QVERIFY(!analysis->isRunning());
        QCOMPARE(analysis->resultCount(), resultsW4);

        // Cancel (Esc): nothing of the cancelled job arrives afterwards.
        finished.clear();
        streamed.clear();
        analyze->trigger();
        QAction* cancel = action(window, "cancelAction");
        QCOMPARE(cancel->shortcut(), QKeySequence(Qt::Key_Escape));
        cancel->trigger();
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.front().front().toBool(), true);
        QVERIFY(!analysis->isRunning());
        QTest::qWait(300);
        QCOMPARE(streamed.count(), 0);
        QCOMPARE(finished.count(), 1);

        // An invalid regex shows inline and blocks export.
        const PlanEdits before = window.planController()->edits();
        const int index =
            window.planController()->addEntry(EntryKind::Ignore, QStringLiteral("re:layers.(0"));
        QVERIFY(!window.currentPlan());
        QVERIFY(QSignalSpy(window.planController(), &PlanController::planChanged).wait(2000));
        QVERIFY(!window.currentPlan());
        QVERIFY(!plan->errorText().isEmpty());
        PlanEntryListModel* ignore = plan->rulesEditor()->model(PlanList::Ignore);
        QVERIFY(
            ignore->index(ignore->rowOfUserEntry(index), 0).data(PlanEntryListModel::HasErrorRole).toBool());

        // Undo (Ctrl+Z) restores the previous entries and the plan can be exported again.
        QAction* undo = nullptr;
        for (QAction* a : window.findChildren<QAction*>()) {
            if (a->shortcut() == QKeySequence(QKeySequence::Undo)) {
                undo = a;
            }
        }
        QVERIFY(undo);
        undo->trigger();
        QCOMPARE(window.planController()->edits(), before);
        QVERIFY(QSignalSpy(window.planController(), &PlanController::planChanged).wait(2000));
        QVERIFY(window.currentPlan());
        QVERIFY(plan->errorText().isEmpty());
    }

    void tensorsViewCheckboxTogglesModule()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        QString module;
        QString weight;
        for (const auto& m : window.currentPlan()->modules) {
            if (m.isLinear() && m.decision == PlanDecision::Quantize && m.fusedGroup.empty()) {
                module = QString::fromStdString(m.name);
                weight = QString::fromStdString(m.weightTensor);
                break;
            }
        }
        QVERIFY(!module.isEmpty());

        // Flat list: the weight's decision cell is a checked checkbox; unchecking it edits the plan.
        TensorTableModel* flat = window.tensorsView()->flatModel();
        const QModelIndex flatCell = flat->indexOfTensor(weight).siblingAtColumn(TensorColumns::Decision);
        QVERIFY(flat->flags(flatCell) & Qt::ItemIsUserCheckable);
        QCOMPARE(flat->data(flatCell, Qt::CheckStateRole).toInt(), static_cast<int>(Qt::Checked));
        QSignalSpy planChanged(&window, &MainWindow::planChanged);
        flat->setData(flatCell, Qt::Unchecked, Qt::CheckStateRole);
        QVERIFY(planChanged.count() > 0);
        QCOMPARE(window.currentPlan()->findModule(module.toStdString())->decision, PlanDecision::Keep);
        QCOMPARE(flat->data(flatCell, Qt::CheckStateRole).toInt(), static_cast<int>(Qt::Unchecked));

        // Tree: the module row carries the checkbox (its tensors do not); checking it quantizes again.
        TensorTreeModel* tree = window.tensorsView()->treeModel();
        const QModelIndex tensorIndex = tree->indexOfTensor(weight);
        QVERIFY(
            !(tree->flags(tensorIndex.siblingAtColumn(TensorColumns::Decision)) & Qt::ItemIsUserCheckable));
        const QModelIndex moduleCell = tensorIndex.parent().siblingAtColumn(TensorColumns::Decision);
        QCOMPARE(tree->data(moduleCell, Qt::CheckStateRole).toInt(), static_cast<int>(Qt::Unchecked));
        tree->setData(moduleCell, Qt::Checked, Qt::CheckStateRole);
        QCOMPARE(window.currentPlan()->findModule(module.toStdString())->decision, PlanDecision::Quantize);
        QCOMPARE(tree->data(moduleCell, Qt::CheckStateRole).toInt(), static_cast<int>(Qt::Checked));

        // Norms and buffers have no checkbox.
        const QModelIndex norm =
            flat->indexOfTensor(QStringLiteral("norm.weight")).siblingAtColumn(TensorColumns::Decision);
        QVERIFY(!(flat->flags(norm) & Qt::ItemIsUserCheckable));
    }

    void lintClickSelectsModules()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        PlanTab* plan = window.planTab();
        for (int row = 0; row < plan->lintModel()->rowCount(); ++row) {
            const QModelIndex index = plan->lintModel()->index(row, 0);
            const QStringList modules = index.data(LintModel::ModulesRole).toStringList();
            if (modules.isEmpty() || !window.currentPlan()->findModule(modules.front().toStdString())) {
                continue;
            }
            Q_EMIT plan->lintView()->clicked(index);
            QCOMPARE(plan->modulesView()->selectionModel()->selectedRows().size(), modules.size());
            const QString current = window.tensorsView()->currentTensor();
            QVERIFY2(current.startsWith(modules.front()), qPrintable(current));
            return;
        }
        QFAIL("the demo's plan has no finding that names modules");
    }

    void screenshotOfPlanAfterAnalysis()
    {
        ScreenshotRequest request;
        request.checkpoint = m_draft;
        request.output = m_dir.filePath(QStringLiteral("plan.png"));
        request.tab = QStringLiteral("plan");
        request.analyze = true;
        QString error;
        QCOMPARE(renderScreenshot(request, &error), 0);
        const QImage image(request.output);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 400);
    }
};

QTEST_MAIN(TestGuiFlow)
#include "tst_gui_flow.moc"
