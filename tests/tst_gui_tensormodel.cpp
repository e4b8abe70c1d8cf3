// The tensor models (flat, grouped, filter/sort proxy) and the document that feeds them.
#include "core/demo/demodraft.h"
#include "core/io/checkpoint.h"
#include "views/document/document.h"
#include "views/document/documentsnapshot.h"
#include "views/shared/formatting.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensorfilterproxymodel.h"
#include "views/tensors/tensortablemodel.h"
#include "views/tensors/tensortreemodel.h"

#include <QAbstractItemModelTester>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace spark;
using namespace Qt::StringLiterals;

namespace {

TensorRow makeRow(const QString& name, std::uint64_t params, std::uint64_t bytes)
{
    TensorRow row;
    row.name = name;
    row.module = name.section(QLatin1Char('.'), 0, -2);
    row.group = name.section(QLatin1Char('.'), 0, 0);
    row.dtype = QStringLiteral("BF16");
    row.shape = {params};
    row.shapeText = QStringLiteral("[%1]").arg(params);
    row.params = params;
    row.bytes = bytes;
    return row;
}

// Leaf names under @p parent of @p model in display order, depth first.
QStringList tensorNames(const QAbstractItemModel& model, const QModelIndex& parent = {})
{
    QStringList names;
    for (int row = 0; row < model.rowCount(parent); ++row) {
        const QModelIndex index = model.index(row, 0, parent);
        if (index.data(TensorColumns::NodeKindRole).toInt() == TensorColumns::TensorNode) {
            names.append(index.data(TensorColumns::TensorNameRole).toString());
        } else {
            names.append(tensorNames(model, index));
        }
    }
    return names;
}

} // namespace

class TestGuiTensorModel : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    std::shared_ptr<const DocumentSnapshot> m_snapshot;
    DemoDraft m_draft;

  private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_draft = describeDemoDraft("glm-dspark", DemoScale::Tiny);
        const auto folder = std::filesystem::path(m_dir.filePath(QStringLiteral("draft")).toStdString());
        writeDemoDraft(m_draft, folder, {});
        auto checkpoint = std::make_shared<const Checkpoint>(Checkpoint::open(folder));
        m_snapshot = DocumentSnapshot::fromCheckpoint(checkpoint, m_dir.filePath(QStringLiteral("draft")));
        QCOMPARE(m_snapshot->rows.size(), m_draft.tensors.size());
    }

    void snapshotRows()
    {
        double share = 0.0;
        for (const auto& row : m_snapshot->rows) {
            QCOMPARE(m_snapshot->rowOf(row.name), static_cast<int>(&row - m_snapshot->rows.data()));
            share += row.share;
            QVERIFY(!row.file.isEmpty());
            QVERIFY(row.end - row.begin == row.bytes);
        }
        QVERIFY(qAbs(share - 1.0) < 1e-9);
        QCOMPARE(m_snapshot->architectureId, QStringLiteral("dspark"));
        QCOMPARE(m_snapshot->rowOf(QStringLiteral("no.such.tensor")), -1);
    }

    // The Role column shows the module role of the plan layer (describeModules), not a guess from the
    // name: a gathered Markov table is an embedding, the confidence head's projection a Linear.
    void rolesFollowThePlanLayer_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("role");
        QTest::addRow("linear") << "layers.0.mlp.down_proj.weight"
                                << "linear";
        QTest::addRow("norm") << "layers.0.input_layernorm.weight"
                              << "norm";
        QTest::addRow("embedding") << "embed_tokens.weight"
                                   << "embedding";
        QTest::addRow("lm_head") << "lm_head.weight"
                                 << "head";
        QTest::addRow("markov_w1 (gathered)") << "markov_head.markov_w1.weight"
                                              << "embedding";
        QTest::addRow("markov_w2") << "markov_head.markov_w2.weight"
                                   << "head";
        QTest::addRow("confidence head") << "confidence_head.proj.weight"
                                         << "linear";
        QTest::addRow("its bias") << "confidence_head.proj.bias"
                                  << "linear";
    }

    void rolesFollowThePlanLayer()
    {
        QFETCH(QString, name);
        QFETCH(QString, role);
        const int row = m_snapshot->rowOf(name);
        QVERIFY2(row >= 0, qPrintable(name));
        QCOMPARE(roleText(m_snapshot->rows[static_cast<std::size_t>(row)].role), role);
        QCOMPARE(m_snapshot->rows[static_cast<std::size_t>(row)].module,
                 name.section(QLatin1Char('.'), 0, -2));
    }

    void modelTester_data()
    {
        QTest::addColumn<bool>("grouped");
        QTest::addColumn<QString>("filter");
        QTest::addColumn<bool>("regex");
        for (const bool grouped : {false, true}) {
            const char* mode = grouped ? "tree" : "flat";
            QTest::addRow("%s, no filter", mode) << grouped << QString() << false;
            QTest::addRow("%s, plain filter", mode) << grouped << QStringLiteral("proj") << false;
            QTest::addRow("%s, regex filter", mode) << grouped << QStringLiteral("^layers\\.[13]\\.") << true;
            QTest::addRow("%s, filter matching nothing", mode) << grouped << QStringLiteral("zzz") << false;
        }
    }

    // Each model under QAbstractItemModelTester through resets, filtering, sorting and analysis updates.
    void modelTester()
    {
        QFETCH(bool, grouped);
        QFETCH(QString, filter);
        QFETCH(bool, regex);
        TensorTableModel flat;
        TensorTreeModel tree;
        QAbstractItemModel* source = grouped ? static_cast<QAbstractItemModel*>(&tree) : &flat;
        auto reset = [&](std::shared_ptr<const DocumentSnapshot> snapshot) {
            auto analysis = std::make_shared<const AnalysisTable>(snapshot ? snapshot->rows.size() : 0);
            grouped ? tree.resetData(snapshot, analysis) : flat.resetData(snapshot, analysis);
        };
        TensorFilterProxyModel proxy;
        proxy.setSourceModel(source);
        QAbstractItemModelTester sourceTester(source, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);

        QCOMPARE(source->rowCount(), 0); // before the first reset
        reset(m_snapshot);
        QVERIFY(source->rowCount() > 0);
        QVERIFY(proxy.setFilter(filter, regex));
        proxy.sort(TensorColumns::Bytes, Qt::DescendingOrder);
        proxy.sort(TensorColumns::Name, Qt::AscendingOrder);

        auto table = std::make_shared<AnalysisTable>(m_snapshot->rows.size());
        QList<int> rows;
        for (int i = 0; i < static_cast<int>(table->size()); i += 3) {
            (*table)[static_cast<std::size_t>(i)] = {QStringLiteral("W4A16"), 0.01 * i, 0.5};
            rows.append(i);
        }
        grouped ? tree.updateAnalysis(table, rows) : flat.updateAnalysis(table, rows);
        proxy.sort(TensorColumns::RelError, Qt::AscendingOrder);

        reset(nullptr);
        QCOMPARE(source->rowCount(), 0);
        QCOMPARE(proxy.rowCount(), 0);
        reset(m_snapshot); // after a reset, with the filter still in force
        QVERIFY(proxy.setFilter(QString(), false));
        QCOMPARE(proxy.acceptedTensorCount(), static_cast<int>(m_snapshot->rows.size()));
    }

    void sortsNumbersAsNumbers_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<QStringList>("expected");
        // Text order of the displayed values would be "10.00 MiB" < "2.00 KiB" < "3.00 MiB" < "900 B".
        QTest::addRow("bytes") << int(TensorColumns::Bytes)
                               << QStringList{u"a.small"_s, u"b.kib"_s, u"d.mib3"_s, u"c.mib10"_s};
        QTest::addRow("share") << int(TensorColumns::Share)
                               << QStringList{u"a.small"_s, u"b.kib"_s, u"d.mib3"_s, u"c.mib10"_s};
        // Params 9 < 100 < 1,000 < 20,000 (text: "1,000" < "100" < "20,000" < "9").
        QTest::addRow("params") << int(TensorColumns::Params)
                                << QStringList{u"c.mib10"_s, u"a.small"_s, u"d.mib3"_s, u"b.kib"_s};
        QTest::addRow("shape") << int(TensorColumns::Shape)
                               << QStringList{u"c.mib10"_s, u"a.small"_s, u"d.mib3"_s, u"b.kib"_s};
        // Rel. error 0.2 < 0.03 as text ("3.000 %" vs "20.000 %" sorts the other way round); no value last.
        QTest::addRow("rel. error") << int(TensorColumns::RelError)
                                    << QStringList{u"d.mib3"_s, u"b.kib"_s, u"a.small"_s, u"c.mib10"_s};
    }

    void sortsNumbersAsNumbers()
    {
        QFETCH(int, column);
        QFETCH(QStringList, expected);
        auto snapshot = DocumentSnapshot::fromRows({makeRow(QStringLiteral("a.small"), 100, 900),
                                                    makeRow(QStringLiteral("b.kib"), 20000, 2048),
                                                    makeRow(QStringLiteral("c.mib10"), 9, 10u << 20),
                                                    makeRow(QStringLiteral("d.mib3"), 1000, 3u << 20)});
        Document document;
        document.setSnapshot(snapshot);
        QCOMPARE(document.setAnalysis({{QStringLiteral("a.small"), std::nullopt, 0.2, std::nullopt},
                                       {QStringLiteral("b.kib"), std::nullopt, 0.03, std::nullopt},
                                       {QStringLiteral("d.mib3"), std::nullopt, 0.004, std::nullopt}}),
                 3);
        TensorTableModel model;
        model.resetData(document.snapshot(), document.analysis());
        TensorFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.sort(column, Qt::AscendingOrder);
        QCOMPARE(tensorNames(proxy), expected);
    }

    void sortsNamesNaturally()
    {
        TensorTreeModel tree;
        tree.resetData(m_snapshot, std::make_shared<const AnalysisTable>());
        TensorFilterProxyModel proxy;
        proxy.setSourceModel(&tree);
        proxy.sort(TensorColumns::Name, Qt::AscendingOrder);
        QStringList layers;
        for (int row = 0; row < proxy.rowCount(); ++row) {
            const QString label = proxy.index(row, 0).data().toString();
            if (label.startsWith(QStringLiteral("layers."))) {
                layers.append(label);
            }
        }
        QCOMPARE(layers,
                 (QStringList{u"layers.0"_s, u"layers.1"_s, u"layers.2"_s, u"layers.3"_s, u"layers.4"_s}));

        // "layers.10" after "layers.9", not after "layers.1".
        auto snapshot = DocumentSnapshot::fromRows({makeRow(QStringLiteral("layers.10.w"), 1, 2),
                                                    makeRow(QStringLiteral("layers.1.w"), 1, 2),
                                                    makeRow(QStringLiteral("layers.9.w"), 1, 2)});
        TensorTableModel flat;
        flat.resetData(snapshot, nullptr);
        proxy.setSourceModel(&flat);
        proxy.sort(TensorColumns::Name, Qt::AscendingOrder);
        QCOMPARE(tensorNames(proxy), (QStringList{u"layers.1.w"_s, u"layers.9.w"_s, u"layers.10.w"_s}));
    }

    void naturalCompare_data()
    {
        QTest::addColumn<QString>("left");
        QTest::addColumn<QString>("right");
        QTest::addColumn<int>("expected");
        QTest::addRow("digits by value") << "layers.9"
                                         << "layers.10" << -1;
        QTest::addRow("longer run larger") << "layers.100.w"
                                           << "layers.20.w" << 1;
        QTest::addRow("leading zeros") << "shard-007"
                                       << "shard-10" << -1;
        QTest::addRow("ignores case") << "Norm"
                                      << "norm.weight" << -1;
        QTest::addRow("prefix first") << "fc"
                                      << "fc.weight" << -1;
        QTest::addRow("text before digits") << "a1"
                                            << "b0" << -1;
    }

    void naturalCompare()
    {
        QFETCH(QString, left);
        QFETCH(QString, right);
        QFETCH(int, expected);
        QCOMPARE(TensorFilterProxyModel::naturalCompare(left, right), expected);
        QCOMPARE(TensorFilterProxyModel::naturalCompare(right, left), -expected);
        QCOMPARE(TensorFilterProxyModel::naturalCompare(left, left), 0);
    }

    void filter_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("regex");
        QTest::addColumn<int>("expected");
        QTest::addRow("empty") << QString() << false << 64;
        QTest::addRow("plain substring") << "q_proj" << false << 5;
        QTest::addRow("plain ignores case") << "Q_PROJ" << false << 5;
        QTest::addRow("plain is not a regex") << "layers.[01]" << false << 0;
        QTest::addRow("plain dot is literal") << "s.0." << false << 11;
        QTest::addRow("regex layers 0 and 1") << "^layers\\.[01]\\." << true << 22;
        QTest::addRow("regex searches anywhere") << "_norm\\.weight$" << true << 11;
        QTest::addRow("regex alternation") << "^(lm_head|embed_tokens)\\." << true << 2;
        QTest::addRow("regex case-sensitive") << "Q_PROJ" << true << 0;
        QTest::addRow("regex matching nothing") << "^nothing$" << true << 0;
    }

    void filter()
    {
        QFETCH(QString, text);
        QFETCH(bool, regex);
        QFETCH(int, expected);
        auto analysis = std::make_shared<const AnalysisTable>(m_snapshot->rows.size());
        TensorTableModel flat;
        flat.resetData(m_snapshot, analysis);
        TensorTreeModel tree;
        tree.resetData(m_snapshot, analysis);
        for (QAbstractItemModel* source :
             {static_cast<QAbstractItemModel*>(&flat), static_cast<QAbstractItemModel*>(&tree)}) {
            TensorFilterProxyModel proxy;
            proxy.setSourceModel(source);
            QVERIFY(proxy.setFilter(text, regex));
            QCOMPARE(proxy.acceptedTensorCount(), expected);
            const QStringList names = tensorNames(proxy);
            for (const auto& name : names) {
                if (regex) {
                    QVERIFY2(QRegularExpression(text).match(name).hasMatch(), qPrintable(name));
                } else {
                    QVERIFY2(name.contains(text, Qt::CaseInsensitive), qPrintable(name));
                }
            }
        }
    }

    void invalidRegexKeepsPreviousFilter()
    {
        TensorTableModel flat;
        flat.resetData(m_snapshot, nullptr);
        TensorFilterProxyModel proxy;
        proxy.setSourceModel(&flat);
        QVERIFY(proxy.setFilter(QStringLiteral("q_proj"), false));
        QCOMPARE(proxy.rowCount(), 5);
        QVERIFY(!proxy.setFilter(QStringLiteral("layers.(0"), true));
        QVERIFY(!proxy.filterError().isEmpty());
        QVERIFY2(proxy.filterError().contains(QStringLiteral("position")), qPrintable(proxy.filterError()));
        QCOMPARE(proxy.rowCount(), 5);
        QVERIFY(proxy.setFilter(QStringLiteral("layers.(0)"), true));
        QVERIFY(proxy.filterError().isEmpty());
        QCOMPARE(proxy.rowCount(), 11);
    }

    void groupsLayersUnderTheirLayer()
    {
        TensorTreeModel tree;
        tree.resetData(m_snapshot, nullptr);
        QSet<QString> groups;
        for (const auto& row : m_snapshot->rows) {
            const QModelIndex tensor = tree.indexOfTensor(row.name);
            QVERIFY(tensor.isValid());
            QCOMPARE(tensor.data(TensorColumns::TensorNameRole).toString(), row.name);
            const QModelIndex module = tensor.parent();
            const QModelIndex group = module.parent();
            QVERIFY(module.isValid() && group.isValid());
            QVERIFY(!group.parent().isValid());
            QCOMPARE(module.data(TensorColumns::NodeKindRole).toInt(), int(TensorColumns::ModuleNode));
            QCOMPARE(group.data(TensorColumns::NodeKindRole).toInt(), int(TensorColumns::GroupNode));
            QCOMPARE(module.data(Qt::ToolTipRole).toString(), row.module);
            const QString groupName = group.data().toString();
            static const QRegularExpression layer(QStringLiteral("^layers\\.(\\d+)\\."));
            if (const auto match = layer.match(row.name); match.hasMatch()) {
                QCOMPARE(groupName, QStringLiteral("layers.") + match.captured(1));
                QVERIFY(row.module.startsWith(groupName + QLatin1Char('.')));
            } else {
                QCOMPARE(groupName, row.name.section(QLatin1Char('.'), 0, 0));
            }
            groups.insert(groupName);
        }
        QCOMPARE(tree.rowCount(), groups.size());
        // A group sums its tensors: layer 3 of the tiny draft has 11 tensors of 11 modules.
        for (int row = 0; row < tree.rowCount(); ++row) {
            const QModelIndex group = tree.index(row, 0);
            if (group.data().toString() == QStringLiteral("layers.3")) {
                QCOMPARE(tree.rowCount(group), 11);
                std::uint64_t bytes = 0;
                for (const auto& tensor : m_snapshot->rows) {
                    bytes += tensor.group == QStringLiteral("layers.3") ? tensor.bytes : 0;
                }
                QCOMPARE(tree.index(row, TensorColumns::Bytes).data(TensorColumns::SortRole).toULongLong(),
                         bytes);
            }
        }
    }

    // An analysis result changes the analysis columns of its tensor (and of the module it stands for) only.
    void analysisUpdateEmitsAnalysisColumnsOnly_data()
    {
        QTest::addColumn<bool>("grouped");
        QTest::addRow("flat") << false;
        QTest::addRow("tree") << true;
    }

    void analysisUpdateEmitsAnalysisColumnsOnly()
    {
        QFETCH(bool, grouped);
        Document document;
        document.setSnapshot(m_snapshot);
        TensorTableModel flat;
        TensorTreeModel tree;
        QAbstractItemModel* model = grouped ? static_cast<QAbstractItemModel*>(&tree) : &flat;
        QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        grouped ? tree.resetData(document.snapshot(), document.analysis())
                : flat.resetData(document.snapshot(), document.analysis());
        connect(&document, &Document::analysisChanged, model, [&](const QList<int>& rows) {
            grouped ? tree.updateAnalysis(document.analysis(), rows)
                    : flat.updateAnalysis(document.analysis(), rows);
        });
        QSignalSpy changed(model, &QAbstractItemModel::dataChanged);
        const QString name = QStringLiteral("layers.2.mlp.up_proj.weight");
        QCOMPARE(
            document.setAnalysis({{name, QStringLiteral("W4A16"), 0.0123, 0.05},
                                  {QStringLiteral("not.in.checkpoint"), QStringLiteral("keep"), {}, {}}}),
            1);
        // The tensor, and in the tree its module and its layer (whose worst error changed).
        QCOMPARE(changed.size(), grouped ? 3 : 1);
        for (const auto& args : changed) {
            QCOMPARE(args.at(0).toModelIndex().column(), int(TensorColumns::Decision));
            QCOMPARE(args.at(1).toModelIndex().column(), int(TensorColumns::MaxError));
        }
        const QModelIndex tensor = grouped ? tree.indexOfTensor(name) : flat.indexOfTensor(name);
        QCOMPARE(tensor.siblingAtColumn(TensorColumns::Decision).data().toString(), QStringLiteral("W4A16"));
        QCOMPARE(tensor.siblingAtColumn(TensorColumns::RelError).data(TensorColumns::SortRole).toDouble(),
                 0.0123);

        // A partial update keeps the fields it does not name.
        QVERIFY(document.setAnalysis({{name, std::nullopt, std::nullopt, 0.07}}) == 1);
        QCOMPARE(tensor.siblingAtColumn(TensorColumns::Decision).data().toString(), QStringLiteral("W4A16"));
        QCOMPARE(tensor.siblingAtColumn(TensorColumns::MaxError).data(TensorColumns::SortRole).toDouble(),
                 0.07);

        document.clearAnalysis();
        QVERIFY(!tensor.siblingAtColumn(TensorColumns::Decision).data().isValid());
        QVERIFY(!tensor.siblingAtColumn(TensorColumns::RelError).data(TensorColumns::SortRole).isValid());
    }

    void headerToolTips()
    {
        TensorTableModel flat;
        TensorTreeModel tree;
        for (const QAbstractItemModel* model :
             {static_cast<QAbstractItemModel*>(&flat), static_cast<QAbstractItemModel*>(&tree)}) {
            QCOMPARE(model->columnCount(), int(TensorColumns::Count));
            for (int column = 0; column < TensorColumns::Count; ++column) {
                QVERIFY(!model->headerData(column, Qt::Horizontal).toString().isEmpty());
                QVERIFY(!model->headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
            }
        }
    }
};

QTEST_MAIN(TestGuiTensorModel)
#include "tst_gui_tensormodel.moc"
