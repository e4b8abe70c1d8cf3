// The Compare tab: a source and a W4A16 export of it side by side, computed off the GUI thread; one
// changed scale shows as that module's red bar and "no".
#include "audittesthelpers.h"
#include "core/io/floatconv.h"
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
    // A path already there, typed or suggested, stays.
    view.suggestPath(QStringLiteral("/drafts/other"), false);
    view.suggestPath(QStringLiteral("/drafts/other-w4"), true);
    QCOMPARE(view.sourcePath(), QStringLiteral("/drafts/bf16"));
    QCOMPARE(view.outputPath(), QStringLiteral("/drafts/w4a16"));
}

QTEST_MAIN(TestGuiCompare)
#include "tst_gui_compare.moc"
