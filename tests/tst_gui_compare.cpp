// The Compare tab: a source and a W4A16 export of it side by side, computed off the GUI thread; one
// changed scale shows as that module's red bar and "no".
#include "audittesthelpers.h"
#include "core/io/floatconv.h"
#include "views/bench/benchplotqcp.h"
#include "views/compare/comparemodel.h"
#include "views/compare/compareplot.h"
#include "views/compare/compareview.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDropEvent>
#include <QLineEdit>
#include <QMimeData>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <cstring>

using namespace spark;
using namespace spark::test;
namespace fs = std::filesystem;

class TestGuiCompare : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void comparesAnExport();
    void missingPathIsAMessage();
    void droppedCheckpointReplacesThePath();
    void openDraftIsSuggested();
    void unrelatedDraftsAreRefused();
    void moduleMissingFromTheSourceIsNotACopy();
    void differingCopiesAreMarkedPerRow();
    void barsKeepTheirHeightAt1000x650();
};

void TestGuiCompare::comparesAnExport()
{
    QTemporaryDir dir;
    const fs::path root(dir.path().toStdString());
    const auto out = exportDemo(root, "llama-eagle3", {}, "w4a16");
    QVERIFY(!out.empty());
    auto e = EditableCheckpoint::load(out);
    auto& scale = e.tensors.at("midlayer.mlp.gate_proj.weight_scale").second;
    std::uint16_t bits;
    std::memcpy(&bits, scale.data(), 2);
    bits = floatToBf16(bf16ToFloat(bits) * 2.0f);
    std::memcpy(scale.data(), &bits, 2);
    e.write(root / "changed");

    CompareView view;
    QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy finished(&view, &CompareView::finished);
    view.setPaths(QString::fromStdString(demoSource(root, "llama-eagle3").string()),
                  QString::fromStdString(out.string()));
    view.startCompare();
    QVERIFY(finished.wait(60000));
    QVERIFY(view.report());
    QVERIFY2(view.report()->ok(), qPrintable(view.statusText()));
    QCOMPARE(view.model()->rowCount(), static_cast<int>(view.report()->modules.size()));
    const int quantized = static_cast<int>(view.report()->quantizedModules());
    QVERIFY(quantized > 0);
    QCOMPARE(view.plot()->barCount(), quantized);
    {
        // Another draft opened: no result of these two stays under its path.
        CompareView other;
        QSignalSpy done(&other, &CompareView::finished);
        other.setPaths(view.sourcePath(), view.outputPath());
        other.startCompare();
        QVERIFY(done.wait(60000) && other.report());
        other.suggestPath(QStringLiteral("/drafts/another"), false);
        QVERIFY(!other.report());
        QCOMPARE(other.model()->rowCount(), 0);
    }
    int yes = 0;
    for (int r = 0; r < view.model()->rowCount(); ++r) {
        yes += view.model()->index(r, CompareModel::BitExact).data().toString() == QStringLiteral("yes");
    }
    QCOMPARE(yes, quantized);
    QVERIFY(view.statusText().contains(QStringLiteral("bit-exact")));

    // The second comparison replaces the first: only the changed module differs.
    view.setPaths(QString::fromStdString(demoSource(root, "llama-eagle3").string()),
                  QString::fromStdString((root / "changed").string()));
    view.startCompare();
    QVERIFY(finished.wait(60000));
    QVERIFY(!view.report()->ok());
    QStringList differing;
    for (int r = 0; r < view.model()->rowCount(); ++r) {
        if (view.model()->index(r, CompareModel::BitExact).data().toString() == QStringLiteral("no")) {
            differing << view.model()->index(r, CompareModel::Module).data().toString();
            QVERIFY(!view.model()->index(r, CompareModel::RelErr).data().toString().isEmpty());
        }
    }
    QCOMPARE(differing, QStringList{QStringLiteral("midlayer.mlp.gate_proj")});
}

void TestGuiCompare::missingPathIsAMessage()
{
    CompareView view;
    QSignalSpy finished(&view, &CompareView::finished);
    view.setPaths(QStringLiteral("/nonexistent/src"), QStringLiteral("/nonexistent/out"));
    view.startCompare();
    QCOMPARE(finished.count(), 1);
    QVERIFY(view.statusText().contains(QStringLiteral("/nonexistent/src")));
    QVERIFY(!view.report());
}

namespace {

/// Drags @p path onto @p edit and drops it, as a file manager would; true when the drop was accepted.
bool dropPath(QLineEdit& edit, const QString& path)
{
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(path)});
    mime.setText(QUrl::fromLocalFile(path).toString()); // what QLineEdit alone would insert
    const QPoint at(5, 5);
    QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&edit, &enter);
    if (!enter.isAccepted()) {
        return false;
    }
    QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&edit, &drop);
    return drop.isAccepted();
}

} // namespace

void TestGuiCompare::droppedCheckpointReplacesThePath()
{
    QTemporaryDir dir;
    const auto source =
        QString::fromStdString(demoSource(fs::path(dir.path().toStdString()), "qwen3-dflash").string());
    CompareView view;
    auto* field = view.findChild<QLineEdit*>(QStringLiteral("compareSource"));
    QVERIFY(field);
    field->setText(QStringLiteral("typed before"));
    QVERIFY(dropPath(*field, source));
    QCOMPARE(view.sourcePath(), source); // replaced, not a file:// URL inserted at the cursor

    // Anything that is not a checkpoint is refused and leaves the field alone.
    const QString notes = dir.filePath(QStringLiteral("notes.txt"));
    QFile file(notes);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    for (const auto& path : {notes, dir.filePath(QStringLiteral("missing"))}) {
        QVERIFY(!dropPath(*field, path));
        QCOMPARE(view.sourcePath(), source);
    }
}

void TestGuiCompare::openDraftIsSuggested()
{
    CompareView view;
    view.suggestPath(QStringLiteral("/drafts/bf16"), false);
    view.suggestPath(QStringLiteral("/drafts/w4a16"), true);
    QCOMPARE(view.sourcePath(), QStringLiteral("/drafts/bf16"));
    QCOMPARE(view.outputPath(), QStringLiteral("/drafts/w4a16"));
    // Opening one of them again changes nothing.
    view.suggestPath(QStringLiteral("/drafts/bf16/"), false);
    QCOMPARE(view.outputPath(), QStringLiteral("/drafts/w4a16"));
    // Another BF16 draft is the new source; the output stays for the user to replace.
    view.suggestPath(QStringLiteral("/drafts/other"), false);
    QCOMPARE(view.sourcePath(), QStringLiteral("/drafts/other"));
    QCOMPARE(view.outputPath(), QStringLiteral("/drafts/w4a16"));
}

namespace {

/// Compares @p source with @p output in @p view and waits for the outcome.
bool compareAndWait(CompareView& view, const fs::path& source, const fs::path& output)
{
    QSignalSpy finished(&view, &CompareView::finished);
    view.setPaths(QString::fromStdString(source.string()), QString::fromStdString(output.string()));
    view.startCompare();
    return finished.wait(60000);
}

/// The model row of @p module, -1 when none.
int rowOf(const CompareView& view, const QString& module)
{
    for (int r = 0; r < view.model()->rowCount(); ++r) {
        if (view.model()->index(r, CompareModel::Module).data().toString() == module) {
            return r;
        }
    }
    return -1;
}

} // namespace

void TestGuiCompare::unrelatedDraftsAreRefused()
{
    QTemporaryDir dir;
    const fs::path root(dir.path().toStdString());
    const auto glm = demoSource(root, "glm-dspark");
    const auto laguna = exportDemo(root, "laguna-dflash", {}, "laguna-w4a16");
    QVERIFY(!laguna.empty());

    CompareView view;
    // A real pair first: its table must not stay behind the refusal.
    const auto eagle = exportDemo(root, "llama-eagle3", {}, "eagle-w4a16");
    QVERIFY(compareAndWait(view, demoSource(root, "llama-eagle3"), eagle));
    QVERIFY(view.model()->rowCount() > 0);

    for (const auto& output : {laguna, demoSource(root, "laguna-dflash")}) {
        QVERIFY(compareAndWait(view, glm, output));
        QVERIFY2(view.statusText().contains(QStringLiteral("not a quantization")),
                 qPrintable(view.statusText()));
        QVERIFY(view.statusText().contains(QString::fromStdString(glm.string())));
        QVERIFY(view.statusText().contains(QString::fromStdString(output.string())));
        QVERIFY(!view.report());
        QCOMPARE(view.model()->rowCount(), 0);
        QCOMPARE(view.plot()->barCount(), 0);
    }
}

void TestGuiCompare::moduleMissingFromTheSourceIsNotACopy()
{
    QTemporaryDir dir;
    const fs::path root(dir.path().toStdString());
    const auto full = demoSource(root, "llama-eagle3");
    auto e = EditableCheckpoint::load(full);
    QVERIFY(e.tensors.erase("midlayer.mlp.up_proj.weight") == 1);
    e.write(root / "without-up");

    CompareView view;
    QVERIFY(compareAndWait(view, root / "without-up", full));
    QVERIFY(view.report());
    const int row = rowOf(view, QStringLiteral("midlayer.mlp.up_proj"));
    QVERIFY(row >= 0);
    const auto state = view.model()->index(row, CompareModel::BitExact).data().toString();
    QVERIFY2(state != QStringLiteral("copy") && state.contains(QStringLiteral("missing")), qPrintable(state));
    const auto err = view.model()->index(row, CompareModel::RelErr).data().toString();
    QCOMPARE(err, QStringLiteral("-"));
    QVERIFY(view.model()
                ->index(row, CompareModel::BitExact)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("source")));
    // The other copies stay identical copies.
    const int other = rowOf(view, QStringLiteral("midlayer.mlp.down_proj"));
    QVERIFY(other >= 0);
    QCOMPARE(view.model()->index(other, CompareModel::BitExact).data().toString(), QStringLiteral("copy"));
}

void TestGuiCompare::differingCopiesAreMarkedPerRow()
{
    QTemporaryDir dir;
    const fs::path root(dir.path().toStdString());
    const auto source = demoSource(root, "llama-eagle3");
    const auto out = exportDemo(root, "llama-eagle3", {}, "w4a16");
    QVERIFY(!out.empty());
    auto e = EditableCheckpoint::load(out);
    // A BF16 module the export copies: one flipped bit.
    QString copied;
    for (auto& [name, tensor] : e.tensors) {
        if (name.ends_with(".weight") && tensor.first.shape.size() == 2 &&
            tensor.first.dtype == DType::BF16 &&
            !e.tensors.contains(name.substr(0, name.size() - 7) + ".weight_scale")) {
            tensor.second[0] ^= std::byte{0x01};
            copied = QString::fromStdString(name.substr(0, name.size() - 7));
            break;
        }
    }
    QVERIFY(!copied.isEmpty());
    e.write(root / "changed");

    CompareView view;
    QVERIFY(compareAndWait(view, source, root / "changed"));
    QVERIFY(view.statusText().contains(QStringLiteral("1 copied tensors differ")));
    int marked = 0;
    for (int r = 0; r < view.model()->rowCount(); ++r) {
        bool says = false;
        for (int c = 0; c < view.model()->columnCount(); ++c) {
            const auto index = view.model()->index(r, c);
            if (index.data().toString().contains(QStringLiteral("differ")) &&
                index.data(Qt::ForegroundRole).isValid() &&
                index.data(Qt::ToolTipRole).toString().contains(copied)) {
                says = true;
            }
        }
        const auto module = view.model()->index(r, CompareModel::Module).data().toString();
        QVERIFY2(says == (module == copied), qPrintable(module));
        marked += says;
    }
    QCOMPARE(marked, 1);
}

void TestGuiCompare::barsKeepTheirHeightAt1000x650()
{
    // The module names under the bars stand on end: whole names ("midlayer.self_attn.q_proj") took two
    // thirds of the plot's height at 1000x650 and squeezed the bars and their axis' labels together.
    QTemporaryDir dir;
    const fs::path root(dir.path().toStdString());
    const auto out = exportDemo(root, "llama-eagle3", {}, "w4a16");
    QVERIFY(!out.empty());
    CompareView view;
    view.resize(1000, 560); // the Compare tab's share of a 1000x650 window
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(compareAndWait(view, demoSource(root, "llama-eagle3"), out));
    QCustomPlot* plot = view.plot()->plot();
    plot->replot(QCustomPlot::rpImmediateRefresh);
    const int bars = plot->axisRect()->height();
    QVERIFY2(bars >= plot->height() / 2,
             qPrintable(QStringLiteral("bars %1 px of a %2 px plot").arg(bars).arg(plot->height())));
    const QFontMetrics metrics(plot->yAxis->labelFont());
    QVERIFY(metrics.horizontalAdvance(plot->yAxis->label()) <= bars);
}

QTEST_MAIN(TestGuiCompare)
#include "tst_gui_compare.moc"
