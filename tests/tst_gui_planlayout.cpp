// The Plan tab's layout at the default window size (issue #25, point 4): in a 1200×700 window every entry
// list (targets, ignore, scheme rules, and the rounding rules behind the rules editor's second tab) shows
// five rows and the lint four, the modules table keeps room, and the summary is a compact table whose rows
// are all in view.
#include "guitesthelpers.h"
#include "views/plan/lintmodel.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentryeditor.h"
#include "views/plan/planentrylistmodel.h"
#include "views/plan/plantab.h"
#include "views/plan/summarybar.h"
#include "views/window/mainwindow.h"

#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QStandardPaths>
#include <QTabBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace spark;
using namespace spark::test;
using namespace Qt::StringLiterals;

namespace {

// Rows of @p view whose whole first cell lies inside the viewport.
int fullyVisibleRows(const QTableView* view)
{
    const QRect viewport = view->viewport()->rect();
    int visible = 0;
    for (int row = 0; row < view->model()->rowCount(); ++row) {
        if (viewport.contains(view->visualRect(view->model()->index(row, 0)))) {
            ++visible;
        }
    }
    return visible;
}

// Whole rows the viewport has room for, whatever the model holds.
int rowCapacity(const QTableView* view)
{
    return view->viewport()->height() / view->verticalHeader()->defaultSectionSize();
}

QString describe(const QTableView* view)
{
    return u"%1: %2 of %3 rows visible, viewport %4 px, row %5 px"_s.arg(view->objectName())
        .arg(fullyVisibleRows(view))
        .arg(view->model()->rowCount())
        .arg(view->viewport()->height())
        .arg(view->verticalHeader()->defaultSectionSize());
}

} // namespace

class TestGuiPlanLayout : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    QString m_draft;

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QLocale::setDefault(QLocale::c());
        QVERIFY(m_dir.isValid());
        m_draft = writeTinyDemo(m_dir, "glm-dspark", u"glm"_s);
    }

    void rowsVisibleAt1200x700()
    {
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.showTab(u"plan"_s));
        // Enough entries for five rows in each list. Entries that match nothing add lint findings, so the
        // lint has more than four rows too.
        PlanController* controller = window.planController();
        for (const QString& entry : {u"re:.*mlp\\..*"_s, u"re:.*\\.fc$"_s, u"model.no_such_module"_s,
                                     u"re:.*never_matches_a$"_s, u"re:.*never_matches_b$"_s}) {
            controller->addEntry(EntryKind::Target, entry);
        }
        for (const QString& entry : {u"model.no_such_ignored_a"_s, u"model.no_such_ignored_b"_s,
                                     u"re:.*never_ignored_c$"_s, u"re:.*never_ignored_d$"_s}) {
            controller->addEntry(EntryKind::Ignore, entry);
        }
        for (const QString& entry :
             {u"re:.*down_proj$=W8A16"_s, u"re:.*up_proj$=W4A16:g32"_s, u"re:.*gate_proj$=W4A16:g32"_s,
              u"re:.*\\.fc$=W8A16:channel"_s, u"re:.*never_ruled$=NVFP4A16"_s}) {
            controller->addEntry(EntryKind::Scheme, entry);
        }
        controller->recomputeNow();
        QApplication::processEvents();
        // The layout fits the window: it did not grow to make room.
        QCOMPARE(window.size(), QSize(1200, 700));

        PlanTab* tab = window.planTab();
        QVERIFY(tab->isVisible());
        for (PlanEntryEditor* editor : {tab->targetsEditor(), tab->ignoreEditor(), tab->schemesEditor()}) {
            QTableView* view = editor->view();
            QVERIFY(view->isVisible());
            QVERIFY2(view->model()->rowCount() >= 5, qPrintable(describe(view)));
            QVERIFY2(rowCapacity(view) >= 5, qPrintable(describe(view)));
            QVERIFY2(fullyVisibleRows(view) >= 5, qPrintable(describe(view)));
            // The title shares the buttons' line: it is above the table, not a group box around it.
            QVERIFY(!editor->title().isEmpty());
        }

        QTableView* lint = tab->lintView();
        QVERIFY2(lint->model()->rowCount() >= 4, qPrintable(describe(lint)));
        QVERIFY2(fullyVisibleRows(lint) >= 4, qPrintable(describe(lint)));
        // The modules keep room too: the main table of the tab is not squeezed out by the others.
        QVERIFY2(fullyVisibleRows(tab->modulesView()) >= 5, qPrintable(describe(tab->modulesView())));

        // The summary is a table, every row of it in view: a row per scheme, the checkpoint, the KV cache
        // and the drafter step.
        QTableWidget* summary = tab->summaryBar()->table();
        QVERIFY(summary->isVisible());
        QStringList labels;
        for (int row = 0; row < summary->rowCount(); ++row) {
            labels.append(summary->item(row, SummaryBar::Label)->text());
        }
        QVERIFY2(labels.contains(u"Checkpoint"_s), qPrintable(labels.join(u", "_s)));
        QVERIFY2(labels.contains(u"KV cache"_s), qPrintable(labels.join(u", "_s)));
        QVERIFY2(labels.contains(u"Drafter step"_s), qPrintable(labels.join(u", "_s)));
        for (const char* scheme : {"W4A16", "W8A16", "W4A16:g32", "W8A16:channel"}) {
            QVERIFY2(labels.contains(QLatin1String(scheme)), qPrintable(labels.join(u", "_s)));
        }
        QCOMPARE(fullyVisibleRows(summary), summary->rowCount());
        // Every cell is in view, and no number is elided in its column.
        const QFontMetrics metrics(summary->font());
        const QRect viewport = summary->viewport()->rect();
        for (int row = 0; row < summary->rowCount(); ++row) {
            for (int column = SummaryBar::Label; column < SummaryBar::ColumnCount; ++column) {
                const QTableWidgetItem* item = summary->item(row, column);
                QVERIFY2(
                    viewport.contains(summary->visualItemRect(item)),
                    qPrintable(
                        u"'%1' (row %2, column %3) is cut off"_s.arg(item->text()).arg(row).arg(column)));
                QVERIFY2(metrics.horizontalAdvance(item->text()) < summary->columnWidth(column),
                         qPrintable(u"'%1' is elided"_s.arg(item->text())));
            }
        }
        // The scheme and rounding rules share the third editor: both tab names whole with their counts, and
        // the rounding rules keep five rows too.
        PlanEntryEditor* rules = tab->schemesEditor();
        QTabBar* tabs = rules->tabBar();
        QVERIFY(tabs && tabs->isVisible());
        for (const QString& rule :
             {u"re:.*down_proj$=mse"_s, u"re:.*up_proj$=range"_s, u"re:.*gate_proj$=mse"_s,
              u"re:.*\\.fc$=range"_s, u"re:.*never_rounded$=mse"_s}) {
            controller->addEntry(PlanList::Roundings, rule);
        }
        controller->recomputeNow();
        rules->setCurrentList(PlanList::Roundings);
        QApplication::processEvents();
        QCOMPARE(window.size(), QSize(1200, 700));
        for (int i = 0; i < tabs->count(); ++i) {
            QVERIFY2(tabs->rect().contains(tabs->tabRect(i)),
                     qPrintable(u"'%1' ends at %2 of %3 px"_s.arg(tabs->tabText(i))
                                    .arg(tabs->tabRect(i).right())
                                    .arg(tabs->width())));
        }
        QTableView* roundings = rules->view();
        QCOMPARE(roundings->objectName(), u"roundingEntries"_s);
        QVERIFY(roundings->isVisible());
        QVERIFY2(fullyVisibleRows(roundings) >= 5, qPrintable(describe(roundings)));
        // The default scheme and rounding choosers on the top line are not squeezed.
        for (QWidget* input : std::initializer_list<QWidget*>{tab->defaultSchemeBox(), tab->roundingBox()}) {
            QVERIFY(input->isVisible());
            QVERIFY2(input->width() >= input->sizeHint().width(),
                     qPrintable(u"%1: %2 of %3 px"_s.arg(input->objectName())
                                    .arg(input->width())
                                    .arg(input->sizeHint().width())));
        }

        // The timing inputs beside the table get their full width.
        for (QWidget* input : std::initializer_list<QWidget*>{tab->summaryBar()->drafterMsInput(),
                                                              tab->summaryBar()->cycleMsInput(),
                                                              tab->summaryBar()->deviceInput()}) {
            QVERIFY(input->isVisible());
            QVERIFY2(input->width() >= input->sizeHint().width(),
                     qPrintable(u"%1: %2 of %3 px"_s.arg(input->objectName())
                                    .arg(input->width())
                                    .arg(input->sizeHint().width())));
        }
    }
};

QTEST_MAIN(TestGuiPlanLayout)
#include "tst_gui_planlayout.moc"
