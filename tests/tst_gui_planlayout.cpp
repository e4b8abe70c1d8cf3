// The Plan tab's layout (docs/app.md, "How the tabs are laid out"): at 1200×700 the modules table, the
// centre of the tab, shows at least twelve rows whatever else is shown (a mixed plan, imported benchmarks,
// an export-blocking error), and does not move when that error comes and goes; every rule list shows five
// rows with its entries whole; the lint keeps four rows; the sizes table is all in view. At 1000×650 nothing
// is cut off.
#include "core/bench/benchimport.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/plan/lintmodel.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planentryeditor.h"
#include "views/plan/planentrylistmodel.h"
#include "views/plan/planmodulemodel.h"
#include "views/plan/plantab.h"
#include "views/plan/summarybar.h"
#include "views/window/mainwindow.h"

#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHash>
#include <QHeaderView>
#include <QStandardPaths>
#include <QStyle>
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

    // At 1200x700 the Module column has 220 px, and no two names read alike once elided (the trained EAGLE-3
    // head's input_layernorm and post_attention_layernorm both read "midlaye…yernorm" at 125 px).
    void moduleNamesReadApartAt1200x700_data()
    {
        QTest::addColumn<QString>("draft");
        QTest::addRow("eagle3") << QString::fromStdString((test::dataPath("trained") / "eagle3").string());
        QTest::addRow("glm-dspark") << m_draft;
    }

    void moduleNamesReadApartAt1200x700()
    {
        QFETCH(QString, draft);
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, draft));
        QVERIFY(window.showTab(u"plan"_s));
        QApplication::processEvents();
        QTableView* modules = window.planTab()->modulesView();
        const int width = modules->columnWidth(PlanModuleModel::Module);
        QVERIFY2(width >= 220, qPrintable(QString::number(width)));
        // The text a cell shows: elided as the view elides, in the cell's width less the item's margins.
        const int textWidth =
            width - 2 * (modules->style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, modules) + 1);
        QHash<QString, QString> shown;
        for (int row = 0; row < modules->model()->rowCount(); ++row) {
            const QString name = modules->model()->index(row, PlanModuleModel::Module).data().toString();
            const QString elided =
                modules->fontMetrics().elidedText(name, modules->textElideMode(), textWidth);
            QVERIFY2(!shown.contains(elided),
                     qPrintable(u"'%1' and '%2' both read '%3'"_s.arg(shown.value(elided), name, elided)));
            shown.insert(elided, name);
        }
    }

    void rowsVisibleAt1200x700() { checkLayout(QSize(1200, 700), 12); }
    void nothingCutOffAt1000x650() { checkLayout(QSize(1000, 650), 9); }

  private:
    void checkLayout(QSize size, int moduleRows)
    {
        MainWindow window(quiet());
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.showTab(u"plan"_s));
        // A mixed plan with rules in every list; entries that match nothing add lint findings, so the lint
        // has more than four rows too.
        PlanController* controller = window.planController();
        for (const QString& entry : {u"re:.*mlp\\..*"_s, u"re:.*\\.fc$"_s, u"model.no_such_module"_s,
                                     u"re:.*never_matches_a$"_s, u"re:.*never_matches_b$"_s}) {
            controller->addEntry(EntryKind::Target, entry);
        }
        for (const QString& entry : {u"model.no_such_ignored_a"_s, u"model.no_such_ignored_b"_s,
                                     u"re:.*never_ignored_c$"_s, u"re:.*never_ignored_d$"_s}) {
            controller->addEntry(EntryKind::Ignore, entry);
        }
        const QStringList schemes{u"re:.*down_proj$=W8A16"_s, u"re:.*up_proj$=W4A16:g32"_s,
                                  u"re:.*gate_proj$=W4A16:g32"_s, u"re:.*\\.fc$=W8A16:channel"_s,
                                  u"re:.*never_ruled$=NVFP4A16"_s};
        for (const QString& entry : schemes) {
            controller->addEntry(EntryKind::Scheme, entry);
        }
        for (const QString& rule : {u"re:.*down_proj$=mse"_s, u"re:.*up_proj$=range"_s}) {
            controller->addEntry(PlanList::Roundings, rule);
        }
        controller->recomputeNow();
        // Benchmarks of the unquantized draft add the speed prediction to the summary.
        const auto imported = importBenchFiles(
            {test::dataPath("bench/glm-dspark-bf16-infqps-concurrency1-GLM-5.2-20260301-101500.json"),
             test::dataPath("bench/glm-dspark-w4a16-infqps-concurrency1-GLM-5.2-20260301-104000.json")});
        PlanTab* tab = window.planTab();
        tab->summaryBar()->setBenchmarks(
            std::make_shared<const BenchReport>(buildBenchReport(imported.records)));
        tab->summaryBar()->drafterMsInput()->setValue(15.88);
        QApplication::processEvents();
        // The layout fits the window: it did not grow to make room.
        QCOMPARE(window.size(), size);
        QVERIFY(tab->isVisible());

        // The modules are the centre.
        QTableView* modules = tab->modulesView();
        QVERIFY2(modules->model()->rowCount() >= moduleRows, qPrintable(describe(modules)));
        QVERIFY2(fullyVisibleRows(modules) >= moduleRows, qPrintable(describe(modules)));
        // What a user decides by is in view without scrolling: the decision, its error and both sizes.
        for (const int column :
             {PlanModuleModel::Module, PlanModuleModel::Decision, PlanModuleModel::RelError,
              PlanModuleModel::Bytes, PlanModuleModel::BytesAfter}) {
            const int left = modules->columnViewportPosition(column);
            QVERIFY2(left >= 0 && left + modules->columnWidth(column) <= modules->viewport()->width(),
                     qPrintable(u"column %1 is out of view: %2 + %3 > %4"_s.arg(column)
                                    .arg(left)
                                    .arg(modules->columnWidth(column))
                                    .arg(modules->viewport()->width())));
        }
        // Every column of the sizes table in view.
        QTableWidget* sizes = tab->summaryBar()->table();
        QVERIFY2(sizes->horizontalHeader()->length() <= sizes->viewport()->width(),
                 qPrintable(describe(sizes)));

        // One rules editor, a tab per list: each list's rows in view and every entry whole in its column.
        PlanEntryEditor* rules = tab->rulesEditor();
        QCOMPARE(rules->tabBar()->count(), 4);
        for (const PlanList list :
             {PlanList::Targets, PlanList::Ignore, PlanList::Schemes, PlanList::Roundings}) {
            rules->setCurrentList(list);
            QApplication::processEvents();
            QTableView* view = rules->view();
            QVERIFY(view->isVisible());
            QVERIFY2(fullyVisibleRows(view) >= std::min(5, view->model()->rowCount()),
                     qPrintable(describe(view)));
            const QFontMetrics metrics(view->font());
            for (int row = 0; row < view->model()->rowCount(); ++row) {
                const QString entry = view->model()->index(row, PlanEntryListModel::Entry).data().toString();
                QVERIFY2(metrics.horizontalAdvance(entry) + 8 <= view->columnWidth(PlanEntryListModel::Entry),
                         qPrintable(u"'%1' is elided in %2 px"_s.arg(entry).arg(
                             view->columnWidth(PlanEntryListModel::Entry))));
            }
        }
        for (int i = 0; i < rules->tabBar()->count(); ++i) {
            QVERIFY2(rules->tabBar()->rect().contains(rules->tabBar()->tabRect(i)),
                     qPrintable(rules->tabBar()->tabText(i)));
        }

        QTableView* lint = tab->lintView();
        QVERIFY2(lint->model()->rowCount() >= 4, qPrintable(describe(lint)));
        QVERIFY2(fullyVisibleRows(lint) >= 4, qPrintable(describe(lint)));

        // The summary is a table, every row of it in view and no number elided: a row per scheme, the
        // checkpoint, the KV cache and the drafter step.
        QTableWidget* summary = tab->summaryBar()->table();
        QVERIFY(summary->isVisible());
        QStringList labels;
        for (int row = 0; row < summary->rowCount(); ++row) {
            labels.append(summary->item(row, SummaryBar::Label)->text());
        }
        for (const char* label :
             {"Checkpoint", "KV cache", "Drafter step", "W4A16", "W8A16", "W4A16:g32", "W8A16:channel"}) {
            QVERIFY2(labels.contains(QLatin1String(label)), qPrintable(labels.join(u", "_s)));
        }
        const QFontMetrics metrics(summary->font());
        const QRect viewport = summary->viewport()->rect();
        for (int row = 0; row < summary->rowCount(); ++row) {
            for (int column = SummaryBar::Label; column < SummaryBar::ColumnCount; ++column) {
                const QTableWidgetItem* item = summary->item(row, column);
                if (!item) {
                    continue;
                }
                QVERIFY2(
                    viewport.contains(summary->visualItemRect(item)),
                    qPrintable(
                        u"'%1' (row %2, column %3) is cut off"_s.arg(item->text()).arg(row).arg(column)));
                QVERIFY2(metrics.horizontalAdvance(item->text()) < summary->columnWidth(column),
                         qPrintable(u"'%1' is elided"_s.arg(item->text())));
            }
        }
        // ... and the summary, its inputs and the speed prediction lie inside the tab, on no other widget.
        const QRect tabRect = tab->rect();
        QList<QWidget*> parts{summary,
                              tab->summaryBar()->drafterMsInput(),
                              tab->summaryBar()->cycleMsInput(),
                              tab->summaryBar()->deviceInput(),
                              modules,
                              lint};
        for (QWidget* part : parts) {
            QVERIFY(part->isVisible());
            const QRect r(part->mapTo(tab, QPoint(0, 0)), part->size());
            QVERIFY2(tabRect.contains(r), qPrintable(u"%1 lies outside the tab"_s.arg(part->objectName())));
            QVERIFY2(part->width() >= part->minimumSizeHint().width(), qPrintable(part->objectName()));
        }
        for (int i = 0; i < parts.size(); ++i) {
            for (int j = i + 1; j < parts.size(); ++j) {
                const QRect a(parts[i]->mapTo(tab, QPoint(0, 0)), parts[i]->size());
                const QRect b(parts[j]->mapTo(tab, QPoint(0, 0)), parts[j]->size());
                QVERIFY2(!a.intersects(b),
                         qPrintable(u"%1 overlaps %2"_s.arg(parts[i]->objectName(), parts[j]->objectName())));
            }
        }
        for (QWidget* input : std::initializer_list<QWidget*>{tab->defaultSchemeBox(), tab->roundingBox()}) {
            QVERIFY(input->isVisible());
            QVERIFY2(input->width() >= input->sizeHint().width(), qPrintable(input->objectName()));
        }

        // An export-blocking error shows its banner without moving the modules.
        const QRect before(modules->mapTo(tab, QPoint(0, 0)), modules->size());
        controller->addEntry(EntryKind::Ignore, u"re:(unclosed"_s);
        controller->recomputeNow();
        QApplication::processEvents();
        QVERIFY(!tab->errorText().isEmpty());
        QCOMPARE(QRect(modules->mapTo(tab, QPoint(0, 0)), modules->size()), before);
        QCOMPARE(window.size(), size);
    }
};

QTEST_MAIN(TestGuiPlanLayout)
#include "tst_gui_planlayout.moc"
