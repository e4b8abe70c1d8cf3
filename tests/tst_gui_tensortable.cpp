// The Tensors table at a glance: rows without a result sort last in both orders, layers
// show their worst error and sort with it, rel. error has one spelling everywhere, the columns fit a
// 1000-pixel window with Decision and Rel. error in view, and the Plan tab's modules show their error (a
// fused set's combined error).
#include "core/plan/quantplan.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/analysis/analysiscontroller.h"
#include "views/analysis/analysispanel.h"
#include "views/document/checkpointloader.h"
#include "views/document/document.h"
#include "views/document/documentsnapshot.h"
#include "views/plan/plancontroller.h"
#include "views/plan/planmodulemodel.h"
#include "views/plan/plantab.h"
#include "views/shared/formatting.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensorerrorsection.h"
#include "views/tensors/tensorfilterproxymodel.h"
#include "views/tensors/tensorsview.h"
#include "views/tensors/tensortablemodel.h"
#include "views/tensors/tensortreemodel.h"
#include "views/window/mainwindow.h"

#include <QAbstractItemModelTester>
#include <QHeaderView>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <cmath>

using namespace spark;
using namespace spark::test;
using namespace Qt::StringLiterals;

namespace {

TensorRow makeRow(const QString& name, std::uint64_t params)
{
    TensorRow row;
    row.name = name;
    row.module = name.section(QLatin1Char('.'), 0, -2);
    row.group = name.section(QLatin1Char('.'), 0, 1);
    row.role = ModuleRole::Linear;
    row.dtype = QStringLiteral("BF16");
    row.shape = {params};
    row.shapeText = QStringLiteral("[%1]").arg(params);
    row.params = params;
    row.bytes = params * 2;
    return row;
}

// Two layers of two tensors each, the second tensor of layer 1 without a result.
std::shared_ptr<const DocumentSnapshot> twoLayers()
{
    return DocumentSnapshot::fromRows(
        {makeRow(u"layers.0.a.weight"_s, 10), makeRow(u"layers.0.b.weight"_s, 20),
         makeRow(u"layers.1.a.weight"_s, 30), makeRow(u"layers.1.b.weight"_s, 40)});
}

std::vector<TensorAnalysisUpdate> someErrors()
{
    return {{u"layers.0.a.weight"_s, std::nullopt, 0.02, 0.1},
            {u"layers.0.b.weight"_s, std::nullopt, 0.15, 0.3},
            {u"layers.1.a.weight"_s, std::nullopt, 0.05, 0.2}};
}

// Full names of the rows under @p parent of @p model in display order, depth first.
QStringList names(const QAbstractItemModel& model, const QModelIndex& parent = {})
{
    QStringList out;
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex index = model.index(row, 0, parent);
        out.append(index.data(TensorColumns::NodeNameRole).toString());
        out.append(names(model, index));
    }
    return out;
}

QStringList topLevel(const QAbstractItemModel& model)
{
    QStringList out;
    for (int row = 0; row < model.rowCount(); ++row) {
        out.append(model.index(row, 0).data(TensorColumns::NodeNameRole).toString());
    }
    return out;
}

} // namespace

class TestGuiTensorTable : public QObject
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

    void unanalysedRowsSortLast_data()
    {
        QTest::addColumn<bool>("grouped");
        QTest::addColumn<int>("order");
        QTest::addColumn<QStringList>("expected");
        QTest::addRow("flat, ascending") << false << int(Qt::AscendingOrder)
                                         << QStringList{u"layers.0.a.weight"_s, u"layers.1.a.weight"_s,
                                                        u"layers.0.b.weight"_s, u"layers.1.b.weight"_s};
        QTest::addRow("flat, descending") << false << int(Qt::DescendingOrder)
                                          << QStringList{u"layers.0.b.weight"_s, u"layers.1.a.weight"_s,
                                                         u"layers.0.a.weight"_s, u"layers.1.b.weight"_s};
        // In the tree, the module without a result goes last under its layer, in either order.
        QTest::addRow("tree, ascending")
            << true << int(Qt::AscendingOrder)
            << QStringList{u"layers.1"_s,         u"layers.1.a"_s,        u"layers.1.a.weight"_s,
                           u"layers.1.b"_s,       u"layers.1.b.weight"_s, u"layers.0"_s,
                           u"layers.0.a"_s,       u"layers.0.a.weight"_s, u"layers.0.b"_s,
                           u"layers.0.b.weight"_s};
        QTest::addRow("tree, descending")
            << true << int(Qt::DescendingOrder)
            << QStringList{u"layers.0"_s,         u"layers.0.b"_s,        u"layers.0.b.weight"_s,
                           u"layers.0.a"_s,       u"layers.0.a.weight"_s, u"layers.1"_s,
                           u"layers.1.a"_s,       u"layers.1.a.weight"_s, u"layers.1.b"_s,
                           u"layers.1.b.weight"_s};
    }

    void unanalysedRowsSortLast()
    {
        QFETCH(bool, grouped);
        QFETCH(int, order);
        QFETCH(QStringList, expected);
        Document document;
        document.setSnapshot(twoLayers());
        QCOMPARE(document.setAnalysis(someErrors()), 3);
        TensorTableModel flat;
        TensorTreeModel tree;
        grouped ? tree.resetData(document.snapshot(), document.analysis())
                : flat.resetData(document.snapshot(), document.analysis());
        TensorFilterProxyModel proxy;
        proxy.setSourceModel(grouped ? static_cast<QAbstractItemModel*>(&tree) : &flat);
        QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.sort(TensorColumns::RelError, static_cast<Qt::SortOrder>(order));
        QCOMPARE(names(proxy), expected);

        // The same for the other analysis column, and for a column every row has (nothing is "missing").
        proxy.sort(TensorColumns::MaxError, static_cast<Qt::SortOrder>(order));
        const QStringList byMax = grouped ? topLevel(proxy) : names(proxy);
        QCOMPARE(byMax.last(), grouped ? (order == Qt::AscendingOrder ? u"layers.0"_s : u"layers.1"_s)
                                       : u"layers.1.b.weight"_s);
    }

    void groupShowsWorstError()
    {
        Document document;
        document.setSnapshot(twoLayers());
        TensorTreeModel tree;
        QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
        tree.resetData(document.snapshot(), document.analysis());
        connect(&document, &Document::analysisChanged, &tree,
                [&](const QList<int>& rows) { tree.updateAnalysis(document.analysis(), rows); });
        auto group = [&tree](const QString& name) {
            for (int row = 0; row < tree.rowCount(); ++row) {
                if (tree.index(row, 0).data(TensorColumns::NodeNameRole).toString() == name) {
                    return tree.index(row, 0);
                }
            }
            return QModelIndex();
        };
        const QModelIndex layer0 = group(u"layers.0"_s);
        QVERIFY(layer0.isValid());
        QVERIFY(!layer0.siblingAtColumn(TensorColumns::RelError).data(TensorColumns::SortRole).isValid());

        QSignalSpy changed(&tree, &QAbstractItemModel::dataChanged);
        QCOMPARE(document.setAnalysis(someErrors()), 3);
        // Layer 0: the worst of 2 % and 15 %; layer 1: its one result.
        QCOMPARE(layer0.siblingAtColumn(TensorColumns::RelError).data(TensorColumns::SortRole).toDouble(),
                 0.15);
        QCOMPARE(layer0.siblingAtColumn(TensorColumns::RelError).data().toString(), formatRelError(0.15));
        QCOMPARE(layer0.siblingAtColumn(TensorColumns::MaxError).data(TensorColumns::SortRole).toDouble(),
                 0.3);
        const QModelIndex layer1 = group(u"layers.1"_s);
        QCOMPARE(layer1.siblingAtColumn(TensorColumns::RelError).data(TensorColumns::SortRole).toDouble(),
                 0.05);
        bool groupAnnounced = false;
        for (const auto& args : changed) {
            groupAnnounced |= args.at(0).toModelIndex().siblingAtColumn(0) == layer0;
        }
        QVERIFY(groupAnnounced);
        // A group has no decision of its own.
        QVERIFY(!layer0.siblingAtColumn(TensorColumns::Decision).data().isValid());

        // A worse result raises the group; clearing the analysis empties it again.
        QCOMPARE(document.setAnalysis({{u"layers.1.b.weight"_s, std::nullopt, 0.4, std::nullopt}}), 1);
        QCOMPARE(layer1.siblingAtColumn(TensorColumns::RelError).data(TensorColumns::SortRole).toDouble(),
                 0.4);
        document.clearAnalysis();
        QVERIFY(!layer1.siblingAtColumn(TensorColumns::RelError).data().isValid());
    }

    void groupedSortOrdersGroups()
    {
        Document document;
        document.setSnapshot(twoLayers());
        QCOMPARE(document.setAnalysis(someErrors()), 3);
        TensorTreeModel tree;
        tree.resetData(document.snapshot(), document.analysis());
        TensorFilterProxyModel proxy;
        proxy.setSourceModel(&tree);
        proxy.sort(TensorColumns::RelError, Qt::DescendingOrder);
        QCOMPARE(topLevel(proxy), (QStringList{u"layers.0"_s, u"layers.1"_s}));
        proxy.sort(TensorColumns::RelError, Qt::AscendingOrder);
        QCOMPARE(topLevel(proxy), (QStringList{u"layers.1"_s, u"layers.0"_s}));
        // A later result re-sorts the layers (dynamic sorting).
        connect(&document, &Document::analysisChanged, &tree,
                [&](const QList<int>& rows) { tree.updateAnalysis(document.analysis(), rows); });
        QCOMPARE(document.setAnalysis({{u"layers.1.b.weight"_s, std::nullopt, 0.4, std::nullopt}}), 1);
        QCOMPARE(topLevel(proxy), (QStringList{u"layers.0"_s, u"layers.1"_s}));
    }

    void relErrorFormat_data()
    {
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("text");
        QTest::addRow("tens of percent") << 0.15892 << "15.9 %";
        QTest::addRow("percent") << 0.012345 << "1.23 %";
        QTest::addRow("below one percent") << 0.000456 << "0.0456 %";
        QTest::addRow("rounds up a digit") << 0.099996 << "10.0 %";
        QTest::addRow("zero") << 0.0 << "0.00 %";
    }

    void relErrorFormat()
    {
        QFETCH(double, value);
        QFETCH(QString, text);
        QCOMPARE(formatRelError(value), text);
        // The table cell uses the same spelling.
        const TensorRowResult result{QString(), value, std::nullopt};
        QCOMPARE(TensorColumns::analysisDisplay(&result, TensorColumns::RelError).toString(), text);
    }

    // One window: the columns at 1000 and 1400 pixels, the same rel. error in table, detail panel and plan.
    void windowColumnsAndOneUnit()
    {
        MainWindow window(quiet());
        window.resize(1000, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(analyzeAndWait(window));
        TensorsView* view = window.tensorsView();
        const QString tensor = u"layers.0.mlp.down_proj.weight"_s;
        QVERIFY(view->selectTensor(tensor));
        QApplication::processEvents();
        // The window stays as narrow as asked: nothing in it needs more.
        QCOMPARE(window.width(), 1000);

        QTreeView* tree = view->treeView();
        QCOMPARE(tree->textElideMode(), Qt::ElideMiddle);
        auto inView = [tree](int column) {
            const QRect rect = tree->visualRect(tree->currentIndex().siblingAtColumn(column));
            return rect.isValid() && tree->viewport()->rect().contains(rect);
        };
        for (const bool grouped : {true, false}) {
            view->setGrouped(grouped);
            QApplication::processEvents();
            QVERIFY(view->selectTensor(tensor));
            QVERIFY2(inView(TensorColumns::Decision), grouped ? "grouped" : "flat");
            QVERIFY2(inView(TensorColumns::RelError), grouped ? "grouped" : "flat");
            QVERIFY(inView(TensorColumns::Name));
        }

        // A wider window: every column fits, and Name takes the spare width (no gap after the last column).
        const int nameAt1000 = tree->columnWidth(TensorColumns::Name);
        window.resize(1400, 700);
        QApplication::processEvents();
        QTRY_VERIFY(tree->columnWidth(TensorColumns::Name) > nameAt1000);
        QCOMPARE(tree->header()->length(), tree->viewport()->width());
        for (int column = 0; column < TensorColumns::Count; ++column) {
            QVERIFY2(inView(column), qPrintable(TensorColumns::title(column)));
        }

        // Rel. error in one unit: the table cell and the detail panel say the same.
        const auto* result = window.analysisController()->result(tensor);
        QVERIFY(result && result->stats && result->stats->relErr);
        const QString expected = formatRelError(*result->stats->relErr);
        QCOMPARE(tree->currentIndex().siblingAtColumn(TensorColumns::RelError).data().toString(), expected);
        QVERIFY2(window.tensorErrorSection()->statsText().contains(
                     expected + u" under "_s + schemeText(window.analysisController()->scheme())),
                 qPrintable(window.tensorErrorSection()->statsText()));

        // ... and the Plan tab's modules table, for an unfused module.
        PlanModuleModel* modules = window.planTab()->moduleModel();
        const int row = modules->rowOf(u"layers.0.mlp.down_proj"_s);
        QVERIFY(row >= 0);
        QCOMPARE(modules->index(row, PlanModuleModel::RelError).data().toString(), expected);

        // Opening a draft fits the columns again (not only the first time).
        tree->setColumnWidth(TensorColumns::Role, 400);
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(tree->columnWidth(TensorColumns::Role) < 400);
    }

    void planTableRelError()
    {
        QString error;
        auto snapshot = CheckpointLoader::openNow(m_draft, &error);
        QVERIFY2(snapshot, qPrintable(error));
        Document document;
        document.setSnapshot(snapshot);
        PlanController controller(&document);
        PlanTab tab(&controller);
        PlanModuleModel* modules = tab.moduleModel();
        QAbstractItemModelTester tester(modules, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(modules->headerData(PlanModuleModel::RelError, Qt::Horizontal).toString(), u"Rel. error"_s);

        // A fused gate/up pair: the set's error adds the sums of both members.
        const auto plan = controller.plan();
        QVERIFY(plan);
        const PlannedModule* gate = plan->findModule("layers.1.mlp.gate_proj");
        const PlannedModule* up = plan->findModule("layers.1.mlp.up_proj");
        QVERIFY(gate && up);
        QCOMPARE(gate->vllmName, up->vllmName);
        QVERIFY(!gate->fusedGroup.empty());
        const int gateRow = modules->rowOf(u"layers.1.mlp.gate_proj"_s);
        const int upRow = modules->rowOf(u"layers.1.mlp.up_proj"_s);
        const int downRow = modules->rowOf(u"layers.1.mlp.down_proj"_s);
        QVERIFY(!modules->index(gateRow, PlanModuleModel::RelError).data().isValid());

        QSignalSpy changed(modules, &QAbstractItemModel::dataChanged);
        std::vector<TensorAnalysisUpdate> updates(3);
        updates[0] = {u"layers.1.mlp.gate_proj.weight"_s, std::nullopt, 0.1, 0.5};
        updates[0].sqNorm = 100.0;
        updates[0].sqErr = 1.0;
        updates[1] = {u"layers.1.mlp.up_proj.weight"_s, std::nullopt, 0.2, 0.5};
        updates[1].sqNorm = 300.0;
        updates[1].sqErr = 12.0;
        updates[2] = {u"layers.1.mlp.down_proj.weight"_s, std::nullopt, 0.07, 0.5};
        updates[2].sqNorm = 50.0;
        updates[2].sqErr = 0.245;
        QCOMPARE(document.setAnalysis(updates), 3);
        QVERIFY(!changed.isEmpty());
        const double combined = std::sqrt((1.0 + 12.0) / (100.0 + 300.0));
        QCOMPARE(*modules->relError(gateRow), combined);
        QCOMPARE(*modules->relError(upRow), combined);
        QCOMPARE(modules->index(gateRow, PlanModuleModel::RelError).data().toString(),
                 formatRelError(combined));
        QVERIFY(
            !modules->index(gateRow, PlanModuleModel::RelError).data(Qt::ToolTipRole).toString().isEmpty());
        QCOMPARE(*modules->relError(downRow), 0.07);

        // Without the sums of every member, a fused module shows its own error.
        document.clearAnalysis();
        QCOMPARE(document.setAnalysis({{u"layers.1.mlp.gate_proj.weight"_s, std::nullopt, 0.1, 0.5}}), 1);
        QCOMPARE(*modules->relError(gateRow), 0.1);
        QVERIFY(!modules->relError(upRow));

        // Sorting by the column: modules without an error last, in both orders.
        auto* view = tab.modulesView();
        auto* proxy = qobject_cast<QSortFilterProxyModel*>(view->model());
        QVERIFY(proxy);
        for (const auto order : {Qt::AscendingOrder, Qt::DescendingOrder}) {
            view->sortByColumn(PlanModuleModel::RelError, order);
            QCOMPARE(proxy->index(0, PlanModuleModel::Module).data().toString(), u"layers.1.mlp.gate_proj"_s);
        }
    }
};

QTEST_MAIN(TestGuiTensorTable)
#include "tst_gui_tensortable.moc"
