// The main window: opening through the menu's code path, errors, stale opens, drag and drop, recent
// files, File ▸ Open Example, the Tensors tab, and `--screenshot` rendering.
#include "audittesthelpers.h"
#include "core/demo/demodraft.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/acceptance/acceptancepanel.h"
#include "views/acceptance/acceptancerunner.h"
#include "views/compare/compareview.h"
#include "views/document/document.h"
#include "views/document/documentsnapshot.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensordetailpanel.h"
#include "views/tensors/tensorfilterproxymodel.h"
#include "views/tensors/tensorsview.h"
#include "views/tensors/tensortablemodel.h"
#include "views/window/mainwindow.h"
#include "views/window/recentfiles.h"
#include "views/window/screenshot.h"

#include <QAction>
#include <QApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QImage>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QUrl>

using namespace spark;
using namespace spark::test;

class TestGuiMainWindow : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    QString m_draft;
    QString m_otherDraft;
    DemoDraft m_description;

    QString path(const QString& name) const { return m_dir.filePath(name); }

  private Q_SLOTS:
    void initTestCase()
    {
        // Never read or write the user's settings.
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("SparkulatorTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_gui_mainwindow"));
        QVERIFY(m_dir.isValid());
        m_description = describeDemoDraft("glm-dspark", DemoScale::Tiny);
        m_draft = path(QStringLiteral("glm"));
        writeDemoDraft(m_description, m_draft.toStdString(), {});
        m_otherDraft = path(QStringLiteral("qwen"));
        writeDemoDraft(describeDemoDraft("qwen3-dflash", DemoScale::Tiny), m_otherDraft.toStdString(), {});
        test::writeFile(path(QStringLiteral("bad/garbage.safetensors")).toStdString(),
                        test::safetensorsImage("{not json", 16));
        QVERIFY(QDir().mkpath(path(QStringLiteral("empty"))));
        test::writeFile(path(QStringLiteral("notes.txt")).toStdString(), "not a checkpoint");
    }

    void opensAndShowsAllTensors()
    {
        MainWindow window(noSavedState());
        QSignalSpy failed(&window, &MainWindow::openFailed);
        QVERIFY(openAndWait(window, m_draft));
        QCOMPARE(failed.size(), 0);
        QCOMPARE(window.currentPath(), m_draft);
        const auto snapshot = window.document()->snapshot();
        QVERIFY(snapshot);
        QCOMPARE(snapshot->rows.size(), m_description.tensors.size());
        QCOMPARE(snapshot->architectureId, QStringLiteral("dspark"));

        TensorsView* view = window.tensorsView();
        QVERIFY(view->isGrouped());
        QCOMPARE(view->proxyModel()->acceptedTensorCount(), static_cast<int>(m_description.tensors.size()));
        view->setGrouped(false);
        QCOMPARE(view->treeView()->model()->rowCount(), static_cast<int>(m_description.tensors.size()));
        QStringList shown;
        for (int row = 0; row < view->treeView()->model()->rowCount(); ++row) {
            shown.append(
                view->treeView()->model()->index(row, 0).data(TensorColumns::TensorNameRole).toString());
        }
        for (const auto& tensor : m_description.tensors) {
            QVERIFY2(shown.contains(QString::fromStdString(tensor.name)), tensor.name.c_str());
        }
        QVERIFY(window.windowTitle().contains(QStringLiteral("glm")));
        // Tensors first; the plan tab (and others) follow it.
        QCOMPARE(window.tabIds().value(0), QStringLiteral("tensors"));
        QVERIFY(window.tabIds().contains(QStringLiteral("plan")));
        // A BF16 draft is offered as the Compare tab's source.
        QCOMPARE(window.compareView()->sourcePath(), m_draft);
        QVERIFY(window.compareView()->outputPath().isEmpty());
    }

    void selectShowsDetails()
    {
        MainWindow window(noSavedState());
        QVERIFY(openAndWait(window, m_draft));
        TensorsView* view = window.tensorsView();
        QSignalSpy current(view, &TensorsView::currentTensorChanged);
        const QString name = QStringLiteral("layers.0.mlp.down_proj.weight");
        QVERIFY(view->selectTensor(name));
        QCOMPARE(view->currentTensor(), name);
        QCOMPARE(current.size(), 1);
        QCOMPARE(current.at(0).at(0).toString(), name);
        const TensorDetailPanel* panel = view->detailPanel();
        QCOMPARE(panel->tensorName(), name);
        QCOMPARE(panel->fieldText(QStringLiteral("Shape")), QStringLiteral("[256, 512]"));
        QCOMPARE(panel->fieldText(QStringLiteral("DType")), QStringLiteral("BF16"));
        QCOMPARE(panel->fieldText(QStringLiteral("Module")), QStringLiteral("layers.0.mlp.down_proj"));
        QCOMPARE(panel->fieldText(QStringLiteral("Group")), QStringLiteral("layers.0"));
        QCOMPARE(panel->fieldText(QStringLiteral("File")), QStringLiteral("model.safetensors"));

        // Switching to the flat list keeps the tensor; a hidden tensor is revealed by clearing the filter.
        view->setGrouped(false);
        QCOMPARE(view->currentTensor(), name);
        QVERIFY(view->setFilter(QStringLiteral("q_proj"), false));
        QVERIFY(view->selectTensor(name));
        QCOMPARE(view->currentTensor(), name);
        QVERIFY(!view->selectTensor(QStringLiteral("no.such.tensor")));
    }

    void invalidRegexShownInline()
    {
        MainWindow window(noSavedState());
        QVERIFY(openAndWait(window, m_draft));
        TensorsView* view = window.tensorsView();
        QVERIFY(view->setFilter(QStringLiteral("^lm_head"), true));
        QCOMPARE(view->proxyModel()->acceptedTensorCount(), 1);
        QVERIFY(view->filterError().isEmpty());
        QVERIFY(!view->setFilter(QStringLiteral("lm_head("), true));
        QVERIFY(view->filterError().contains(QStringLiteral("Invalid regular expression")));
        QCOMPARE(view->proxyModel()->acceptedTensorCount(), 1);
        QVERIFY(view->setFilter(QStringLiteral("lm_head("), false));
        QVERIFY(view->filterError().isEmpty());
        QCOMPARE(view->proxyModel()->acceptedTensorCount(), 0);
    }

    void failedOpenKeepsDocument_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("named");
        QTest::addRow("corrupt header")
            << QStringLiteral("bad/garbage.safetensors") << QStringLiteral("garbage.safetensors");
        QTest::addRow("missing path") << QStringLiteral("does-not-exist") << QStringLiteral("does-not-exist");
        QTest::addRow("folder without shards") << QStringLiteral("empty") << QStringLiteral("empty");
    }

    void failedOpenKeepsDocument()
    {
        QFETCH(QString, target);
        QFETCH(QString, named);
        MainWindow window; // dialogs on: the error must be shown to the user
        QVERIFY(openAndWait(window, m_draft));
        const auto before = window.document()->snapshot();
        QSignalSpy failed(&window, &MainWindow::openFailed);
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        window.open(path(target));
        QVERIFY(failed.wait(30000));
        QCOMPARE(loaded.size(), 0);
        const QString message = failed.at(0).at(1).toString();
        QVERIFY2(message.contains(named), qPrintable(message));
        QCOMPARE(window.document()->snapshot(), before);
        QCOMPARE(window.currentPath(), m_draft);
        QCOMPARE(window.tensorsView()->proxyModel()->acceptedTensorCount(),
                 static_cast<int>(m_description.tensors.size()));
        auto* box = window.findChild<QMessageBox*>(QStringLiteral("openErrorDialog"));
        QVERIFY(box);
        QVERIFY(box->isVisible());
        QVERIFY(box->text().contains(named));
        QCOMPARE(box->informativeText(), message);
        box->accept();
    }

    // The later of two opens wins, whichever finishes first.
    void staleOpenIsDropped()
    {
        MainWindow window(noSavedState());
        QSignalSpy failed(&window, &MainWindow::openFailed);
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        window.open(path(QStringLiteral("bad/garbage.safetensors")));
        window.open(m_otherDraft);
        window.open(m_draft);
        QVERIFY(loaded.wait(30000));
        QTest::qWait(200); // give the stale jobs time to arrive (and be dropped)
        QCOMPARE(loaded.size(), 1);
        QCOMPARE(loaded.at(0).at(0).toString(), m_draft);
        QCOMPARE(failed.size(), 0);
        QCOMPARE(window.document()->snapshot()->architectureId, QStringLiteral("dspark"));
    }

    void dragAndDrop_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<bool>("accepted");
        QTest::addRow("folder") << QStringLiteral("qwen") << true;
        QTest::addRow("safetensors file") << QStringLiteral("qwen/model.safetensors") << true;
        QTest::addRow("text file") << QStringLiteral("notes.txt") << false;
        QTest::addRow("missing") << QStringLiteral("gone.safetensors") << false;
    }

    void dragAndDrop()
    {
        QFETCH(QString, target);
        QFETCH(bool, accepted);
        MainWindow window(noSavedState());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(path(target))});
        const QPoint centre = window.rect().center();
        QDragEnterEvent enter(centre, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &enter);
        QCOMPARE(enter.isAccepted(), accepted);
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        QDropEvent drop(QPointF(centre), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&window, &drop);
        if (accepted) {
            QVERIFY(loaded.wait(30000));
            QCOMPARE(window.document()->snapshot()->architectureId, QStringLiteral("qwen3-dflash"));
        } else {
            QTest::qWait(50);
            QCOMPARE(loaded.size(), 0);
            QVERIFY(window.document()->isEmpty());
        }
    }

    void findShortcutFocusesFilter()
    {
        MainWindow window(noSavedState());
        window.show();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QVERIFY(openAndWait(window, m_draft));
        window.tensorsView()->treeView()->setFocus();
        QTest::keyClick(&window, Qt::Key_F, Qt::ControlModifier);
        auto* filter = window.findChild<QLineEdit*>(QStringLiteral("tensorFilter"));
        QVERIFY(filter);
        QTRY_COMPARE(QApplication::focusWidget(), filter);
    }

    void ctrlQQuits()
    {
        MainWindow window(noSavedState());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QTest::keyClick(&window, Qt::Key_Q, Qt::ControlModifier);
        QTRY_VERIFY(!window.isVisible());
    }

    void openExampleIsReadyToRun()
    {
        MainWindow window(noSavedState());
        // From a build tree the example is the source tree's trained drafts.
        const auto trained = QFileInfo(QStringLiteral(SPARK_TEST_DATA "/trained")).canonicalFilePath();
        QVERIFY(window.openExampleAction()->isEnabled());
        QSignalSpy loaded(&window, &MainWindow::documentLoaded);
        window.openExampleAction()->trigger();
        QVERIFY(loaded.wait(30000));
        QCOMPARE(window.currentPath(), trained + QStringLiteral("/eagle3"));
        QVERIFY(window.statusBar()->currentMessage().startsWith(QStringLiteral("Example:")));
        auto* acceptance = window.acceptancePanel();
        QCOMPARE(acceptance->captureEdit()->text(), trained + QStringLiteral("/capture-hs"));
        QCOMPARE(acceptance->targetEdit()->text(), trained + QStringLiteral("/target"));

        // It runs as it is: the plan against BF16 on the example's capture.
        acceptance->anchorsSpin()->setValue(32);
        QSignalSpy finished(acceptance->runner(), &AcceptanceRunner::finished);
        acceptance->runButton()->click();
        QVERIFY(finished.wait(180000));
        const auto result = finished.front().front().value<AcceptanceJobResult>();
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QVERIFY(result.run);

        // A capture belongs to its draft: another draft shows its own fields, and each comes back.
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(acceptance->captureEdit()->text().isEmpty());
        QVERIFY(acceptance->targetEdit()->text().isEmpty());
        acceptance->captureEdit()->setText(path(QStringLiteral("glm-capture")));
        QVERIFY(openAndWait(window, trained + QStringLiteral("/eagle3")));
        QCOMPARE(acceptance->captureEdit()->text(), trained + QStringLiteral("/capture-hs"));
        QVERIFY(openAndWait(window, m_draft));
        QCOMPARE(acceptance->captureEdit()->text(), path(QStringLiteral("glm-capture")));
    }

    // A capture opened as a draft loads as a Generic checkpoint; the status line says what it is instead.
    void captureOpenedAsADraftSaysSo()
    {
        MainWindow window(noSavedState());
        QVERIFY(openAndWait(window, QStringLiteral(SPARK_TEST_DATA "/trained/capture")));
        QCOMPARE(window.document()->snapshot()->architectureId, QStringLiteral("generic"));
        QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("is a capture of target hidden "
                                                                              "states, not a draft")),
                 qPrintable(window.statusBar()->currentMessage()));
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.statusBar()->currentMessage().startsWith(QStringLiteral("Opened ")));
    }

    void recentFiles()
    {
        QSettings settings(path(QStringLiteral("recent.ini")), QSettings::IniFormat);
        RecentFiles recent(&settings);
        QSignalSpy changed(&recent, &RecentFiles::changed);
        QStringList files;
        for (int i = 0; i < 12; ++i) {
            files.append(path(QStringLiteral("recent/%1.safetensors").arg(i)));
            test::writeFile(files.back().toStdString(), "x");
            recent.add(files.back());
        }
        QCOMPARE(changed.size(), 12);
        QStringList expected;
        for (int i = 11; i >= 2; --i) {
            expected.append(files[i]);
        }
        QCOMPARE(recent.paths(), expected); // newest first, at most ten
        recent.add(files[5]);
        QCOMPARE(recent.paths().front(), files[5]);
        QCOMPARE(recent.paths().size(), RecentFiles::MaxEntries);
        QVERIFY(QFile::remove(files[11]));
        QVERIFY(!recent.paths().contains(files[11])); // pruned on read, and stored pruned
        QCOMPARE(settings.value(QStringLiteral("recentFiles")).toStringList().size(), 9);
        recent.clear();
        QVERIFY(recent.paths().isEmpty());
    }

    void openRecordsRecentFile()
    {
        QSettings().remove(QStringLiteral("recentFiles"));
        MainWindow window; // persistent: records what it opens
        QVERIFY(openAndWait(window, m_draft));
        QVERIFY(window.recentFiles()->paths().contains(QFileInfo(m_draft).absoluteFilePath()));
        window.recentFiles()->clear();
    }

    void analysisReachesTheView()
    {
        MainWindow window(noSavedState());
        QVERIFY(openAndWait(window, m_draft));
        window.tensorsView()->setGrouped(false);
        const QString name = QStringLiteral("fc.weight");
        QCOMPARE(window.document()->setAnalysis({{name, QStringLiteral("stale"), 0.02, 0.125}}), 1);
        const QModelIndex index = window.tensorsView()->flatModel()->indexOfTensor(name);
        QCOMPARE(index.siblingAtColumn(TensorColumns::Decision).data().toString(), QStringLiteral("stale"));
        QVERIFY(!index.siblingAtColumn(TensorColumns::MaxError).data().toString().isEmpty());
        // A new document starts without errors; its decisions are the fresh plan's, not the old ones.
        QVERIFY(openAndWait(window, m_draft));
        const QModelIndex reopened = window.tensorsView()->flatModel()->indexOfTensor(name);
        QVERIFY(!reopened.siblingAtColumn(TensorColumns::MaxError).data().isValid());
        // No error value: the plan quantizes fc and nothing measured its scheme yet, which the cell says.
        QVERIFY(!reopened.siblingAtColumn(TensorColumns::RelError).data(TensorColumns::SortRole).isValid());
        QVERIFY2(reopened.siblingAtColumn(TensorColumns::RelError)
                     .data()
                     .toString()
                     .startsWith(QStringLiteral("not measured: ")),
                 qPrintable(reopened.siblingAtColumn(TensorColumns::RelError).data().toString()));
        QVERIFY(reopened.siblingAtColumn(TensorColumns::Decision).data().toString() !=
                QStringLiteral("stale"));
    }

    void aboutNamesVersions()
    {
        const QString text = MainWindow::aboutText();
        QVERIFY(text.contains(QStringLiteral(SPARK_VERSION)));
        QVERIFY(text.contains(QString::fromLatin1(qVersion())));
        QVERIFY(text.contains(QStringLiteral("QCustomPlot 2.")));
    }

    void screenshot()
    {
        ScreenshotRequest request;
        request.checkpoint = m_draft;
        request.output = path(QStringLiteral("shot.png"));
        request.select = QStringLiteral("layers.1.self_attn.q_proj.weight");
        QString error;
        QCOMPARE(renderScreenshot(request, &error), 0);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(QFileInfo(request.output).size() > 0);
        const QImage image(request.output);
        QVERIFY(!image.isNull());
        QVERIFY(image.width() > 200 && image.height() > 200);
    }

    /// --sweep and --compare: the Budget tab shows the measured frontier, the Compare tab a finished
    /// comparison with an export of the same draft.
    void screenshotAfterSweepAndCompare()
    {
        const std::filesystem::path root(path(QStringLiteral("shots")).toStdString());
        const auto exported = exportDemo(root, "glm-dspark", {"re:.*mlp\\..*=NVFP4A16"}, "mixed");
        QVERIFY(!exported.empty());
        ScreenshotRequest request;
        request.checkpoint = QString::fromStdString(demoSource(root, "glm-dspark").string());
        request.sweep = true;
        request.budgetPoint = 0.5; // applies a budget plan: the "what changed" table has rows
        request.compareWith = QString::fromStdString(exported.string());
        for (const auto& tab : {QStringLiteral("budget"), QStringLiteral("compare")}) {
            request.tab = tab;
            request.output = path(tab + QStringLiteral(".png"));
            QString error;
            QCOMPARE(renderScreenshot(request, &error), 0);
            QVERIFY2(error.isEmpty(), qPrintable(error));
            QVERIFY(!QImage(request.output).isNull());
        }

        request.compareWith = path(QStringLiteral("no-such-output"));
        request.output = path(QStringLiteral("compare-missing.png"));
        QString error;
        QCOMPARE(renderScreenshot(request, &error), 2);
        QVERIFY2(error.contains(QStringLiteral("no-such-output")), qPrintable(error));
        QVERIFY(!QFileInfo::exists(request.output));

        // A budget point needs the sweep's frontier.
        request.compareWith.clear();
        request.sweep = false;
        request.output = path(QStringLiteral("budget-without-sweep.png"));
        QCOMPARE(renderScreenshot(request, &error), 2);
        QVERIFY2(error.contains(QStringLiteral("--budget-point")), qPrintable(error));
        QVERIFY(!QFileInfo::exists(request.output));
    }

    void screenshotErrors_data()
    {
        QTest::addColumn<QString>("checkpoint");
        QTest::addColumn<QString>("output");
        QTest::addColumn<QString>("tab");
        QTest::addColumn<QString>("select");
        QTest::addColumn<QString>("named");
        QTest::addRow("corrupt checkpoint") << "bad/garbage.safetensors"
                                            << "a.png"
                                            << "tensors"
                                            << ""
                                            << "garbage";
        QTest::addRow("unknown tab") << "glm"
                                     << "b.png"
                                     << "nope"
                                     << ""
                                     << "nope";
        QTest::addRow("unknown tensor") << "glm"
                                        << "c.png"
                                        << "tensors"
                                        << "no.such"
                                        << "no.such";
        QTest::addRow("unwritable output") << "glm"
                                           << "missing-dir/d.png"
                                           << "tensors"
                                           << ""
                                           << "d.png";
    }

    void screenshotErrors()
    {
        QFETCH(QString, checkpoint);
        QFETCH(QString, output);
        QFETCH(QString, tab);
        QFETCH(QString, select);
        QFETCH(QString, named);
        ScreenshotRequest request;
        request.checkpoint = path(checkpoint);
        request.output = path(output);
        request.tab = tab;
        request.select = select;
        QString error;
        QCOMPARE(renderScreenshot(request, &error), 2);
        QVERIFY2(error.contains(named), qPrintable(error));
        QVERIFY(!QFileInfo::exists(request.output));
    }
};

QTEST_MAIN(TestGuiMainWindow)
#include "tst_gui_mainwindow.moc"
