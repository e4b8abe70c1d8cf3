// The Tensors tab's detail panel: no stale "Analyzing…" after an analysis ends or a new
// draft opens, a centred hint when nothing is selected, module and layer rows shown as such, and the mouse
// wheel over a histogram scrolling the panel.
#include "core/plan/quantplan.h"
#include "guitesthelpers.h"
#include "views/analysis/analysiscontroller.h"
#include "views/analysis/analysispanel.h"
#include "views/bench/benchplotqcp.h"
#include "views/plan/plancontroller.h"
#include "views/shared/formatting.h"
#include "views/tensors/histogramplot.h"
#include "views/tensors/tensordetailpanel.h"
#include "views/tensors/tensorerrorsection.h"
#include "views/tensors/tensorplansection.h"
#include "views/tensors/tensorsview.h"
#include "views/window/mainwindow.h"

#include <QApplication>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpontaneKeyEvent>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QWheelEvent>

using namespace spark;
using namespace spark::test;
using namespace Qt::StringLiterals;

namespace {

QScrollArea* scrollAreaOf(QWidget* widget)
{
    for (QWidget* w = widget; w; w = w->parentWidget()) {
        if (auto* area = qobject_cast<QScrollArea*>(w)) {
            return area;
        }
    }
    return nullptr;
}

// A wheel notch down over the middle of @p target, delivered as one from the mouse: QApplication passes a
// spontaneous wheel event that a widget ignores on to its parents (a synthesized one it does not, and
// sendEvent() would make it synthesized, hence notify()).
void wheelDown(QWidget* target)
{
    const QPointF local = QRectF(target->rect()).center();
    QWheelEvent wheel(local, target->mapToGlobal(local), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QSpontaneKeyEvent::setSpontaneous(&wheel);
    qApp->notify(target, &wheel);
}

} // namespace

class TestGuiDetailPanel : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    QString m_draft;
    const QString m_weight = u"layers.0.mlp.down_proj.weight"_s;

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QLocale::setDefault(QLocale::c());
        QVERIFY(m_dir.isValid());
        m_draft = writeTinyDemo(m_dir, "glm-dspark", u"glm"_s);
    }

    void noStaleAnalyzingAfterCancel()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.tensorsView()->selectTensor(m_weight));
        TensorErrorSection* section = window.tensorErrorSection();
        QCOMPARE(section->statsText(), u"Not analyzed: press F5 to analyze."_s);
        // Results arrive through the event loop: right after the start there are none yet.
        window.analysisPanel()->analyze();
        QVERIFY(window.analysisController()->isRunning());
        QCOMPARE(section->statsText(), u"Analyzing…"_s);
        window.analysisController()->cancel();
        QVERIFY(!window.analysisController()->isRunning());
        QCOMPARE(section->statsText(), u"Not analyzed: press F5 to analyze."_s);

        // A tensor analyze does not measure says so, running or not.
        QVERIFY(window.tensorsView()->selectTensor(u"layers.0.input_layernorm.weight"_s));
        QVERIFY(section->statsText().startsWith(u"Not measured"_s));
        QVERIFY(analyzeAndWait(window));
        QVERIFY(section->statsText().startsWith(u"Not measured"_s));
        QVERIFY(window.tensorsView()->selectTensor(m_weight));
        QVERIFY(section->statsText().startsWith(u"Rel. error"_s));
    }

    void noStaleResultOnNewDraft()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.tensorsView()->selectTensor(m_weight));
        TensorErrorSection* section = window.tensorErrorSection();
        // Opening the draft again while its analysis runs (or after it finished: the job is quick): the
        // tensor of the same name in the new document has no result, and nothing is running.
        window.analysisPanel()->analyze();
        QCOMPARE(section->statsText(), u"Analyzing…"_s);
        QVERIFY(openAndWait(window, m_draft));
        QCOMPARE(window.tensorsView()->currentTensor(), m_weight);
        QVERIFY(!window.analysisController()->isRunning());
        QCOMPARE(section->statsText(), u"Not analyzed: press F5 to analyze."_s);
        QVERIFY(section->weightPlot()->isHidden());

        QVERIFY(analyzeAndWait(window));
        QVERIFY(section->statsText().startsWith(u"Rel. error"_s));
        QVERIFY(openAndWait(window, m_draft));
        QCOMPARE(section->statsText(), u"Not analyzed: press F5 to analyze."_s);
    }

    void emptyStateIsACentredHint()
    {
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft));
        TensorsView* view = window.tensorsView();
        TensorDetailPanel* panel = view->detailPanel();
        QVERIFY(view->selection().isEmpty());
        QCOMPARE(panel->hintText(), u"Select a tensor to see its details."_s);
        // No empty sections under it: the plan section and the others are out of sight.
        QVERIFY(!window.tensorPlanSection()->isVisible());
        QVERIFY(!window.tensorErrorSection()->isVisible());
        auto* hint = panel->findChild<QLabel*>(u"detailHint"_s);
        QVERIFY(hint && hint->isVisible());
        // Centred in what the panel shows (its scroll area's viewport), both ways.
        QScrollArea* area = scrollAreaOf(panel);
        QVERIFY(area);
        QApplication::processEvents();
        QCOMPARE(area->verticalScrollBar()->maximum(), 0);
        const QPoint center = hint->mapTo(area->viewport(), hint->rect().center());
        const QPoint expected = area->viewport()->rect().center();
        QVERIFY2(
            (center - expected).manhattanLength() <= 4,
            qPrintable(
                u"%1,%2 vs %3,%4"_s.arg(center.x()).arg(center.y()).arg(expected.x()).arg(expected.y())));
        QCOMPARE(hint->alignment(), Qt::AlignCenter);

        QVERIFY(view->selectTensor(m_weight));
        QVERIFY(panel->hintText().isEmpty());
        QVERIFY(window.tensorPlanSection()->isVisible());
        view->treeView()->setCurrentIndex(QModelIndex());
        QVERIFY(!panel->hintText().isEmpty());
        QVERIFY(!window.tensorPlanSection()->isVisible());
    }

    void moduleAndGroupRows()
    {
        MainWindow window(quiet());
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(analyzeAndWait(window));
        TensorsView* view = window.tensorsView();
        TensorDetailPanel* panel = view->detailPanel();
        QSignalSpy selected(view, &TensorsView::selectionChanged);

        // A module row: the module, its tensors, the plan's decision and its weight's error.
        QVERIFY(view->selectNode(u"layers.0.mlp.down_proj"_s));
        QCOMPARE(selected.size(), 1);
        QCOMPARE(view->selection().kind, TensorSelection::Module);
        QCOMPARE(view->selection().tensor, m_weight);
        QVERIFY(view->currentTensor().isEmpty());
        QCOMPARE(panel->selection().kind, TensorSelection::Module);
        QVERIFY(panel->hintText().isEmpty());
        QCOMPARE(panel->fieldText(u"Name"_s), u"layers.0.mlp.down_proj"_s);
        QCOMPARE(panel->fieldText(u"Tensors"_s), u"weight  [256, 512]  BF16"_s);
        QCOMPARE(panel->fieldText(u"Params"_s), formatCount(131072));
        QVERIFY(window.tensorPlanSection()->vllmNameText().endsWith(u".mlp.down_proj"_s));
        QVERIFY2(window.tensorPlanSection()->decisionText().startsWith(u"W4A16"_s),
                 qPrintable(window.tensorPlanSection()->decisionText()));
        QVERIFY(window.tensorErrorSection()->statsText().startsWith(u"Rel. error"_s));
        QVERIFY(window.tensorErrorSection()->weightPlot()->isVisibleTo(window.tensorErrorSection()));

        // The lint of a module shows on its row: q/k/v stay BF16 because vLLM reads their weight raw.
        QVERIFY(view->selectNode(u"layers.0.self_attn.q_proj"_s));
        QVERIFY2(window.tensorPlanSection()->lintText().contains(u"raw-weight-read"_s),
                 qPrintable(window.tensorPlanSection()->lintText()));
        QVERIFY(window.tensorPlanSection()->decisionText().startsWith(u"keep"_s));

        // A layer row: its modules' decisions and lint, its worst error.
        QVERIFY(view->selectNode(u"layers.0"_s));
        QCOMPARE(view->selection().kind, TensorSelection::Group);
        QCOMPARE(panel->fieldText(u"Modules"_s), u"11"_s);
        QCOMPARE(panel->fieldText(u"Tensors"_s), u"11"_s);
        const QString decisions = window.tensorPlanSection()->decisionText();
        QVERIFY2(decisions.startsWith(u"11 module(s):"_s) && decisions.contains(u"W4A16"_s) &&
                     decisions.contains(u"kept"_s),
                 qPrintable(decisions));
        QVERIFY(window.tensorPlanSection()->lintText().contains(u"raw-weight-read"_s));
        QVERIFY2(window.tensorErrorSection()->statsText().startsWith(u"Worst rel. error"_s),
                 qPrintable(window.tensorErrorSection()->statsText()));
        QVERIFY(window.tensorErrorSection()->weightPlot()->isHidden());

        // Back to a tensor: the tensor's fields again.
        QVERIFY(view->selectTensor(m_weight));
        QCOMPARE(panel->fieldText(u"Shape"_s), u"[256, 512]"_s);
        QCOMPARE(view->selection().kind, TensorSelection::Tensor);
    }

    void wheelOverPlotScrollsPanel()
    {
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(analyzeAndWait(window));
        QVERIFY(window.tensorsView()->selectTensor(m_weight));
        QApplication::processEvents();
        HistogramPlot* plot = window.tensorErrorSection()->weightPlot();
        QVERIFY(plot->isVisible());
        QScrollArea* area = scrollAreaOf(plot);
        QVERIFY(area);
        QScrollBar* bar = area->verticalScrollBar();
        QVERIFY2(bar->maximum() > 0, "the panel is taller than the window");
        bar->setValue(0);
        wheelDown(plot);
        QVERIFY2(bar->value() > 0, "the wheel over the histogram scrolls the panel");

        // A plot that zooms with the wheel keeps it.
        plot->setInteractions(QCP::iRangeZoom);
        const int zoomed = bar->value();
        wheelDown(plot);
        QCOMPARE(bar->value(), zoomed);
    }
};

QTEST_MAIN(TestGuiDetailPanel)
#include "tst_gui_detailpanel.moc"
