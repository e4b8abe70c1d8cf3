// The export dialog on a tiny laguna-dflash demo: export + verify complete and are shown, README.md carries
// the YAML front matter, the target pairing and attached benchmarks, inputs are validated, and Cancel
// mid-export leaves neither the output nor a staging folder behind.
#include "core/bench/benchimport.h"
#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/compare/compareview.h"
#include "views/export/exportdialog.h"
#include "views/window/mainwindow.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <chrono>
#include <thread>

using namespace spark;
using namespace spark::test;

namespace {

QuantPlan planFor(const Checkpoint& checkpoint, const std::string& preset)
{
    PlanOptions options;
    options.preset = preset;
    return makePlan(checkpoint.config(), infosOf(checkpoint), options);
}

BenchReport csvReport()
{
    const auto import = importBenchFiles({test::dataPath("bench/spec_decode_repeats_long.csv")});
    return buildBenchReport(import.records, {}, import.warnings);
}

// Everything in @p folder, for "nothing left behind" checks.
QStringList entries(const QString& folder)
{
    return QDir(folder).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                                  QDir::Name);
}

} // namespace

class TestGuiExport : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    QString m_source;
    std::shared_ptr<const Checkpoint> m_checkpoint;
    QuantPlan m_plan;

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        m_source = writeTinyDemo(m_dir, "laguna-dflash", QStringLiteral("laguna"));
        m_checkpoint = std::make_shared<const Checkpoint>(Checkpoint::open(m_source.toStdString()));
        m_plan = planFor(*m_checkpoint, "laguna-dflash");
        QVERIFY(m_plan.errors.empty());
        QVERIFY(!m_plan.quantizedModules().empty());
    }

    void defaultOutputBesideSource()
    {
        ExportDialog dialog(m_checkpoint, m_plan);
        QCOMPARE(dialog.outputPath(), m_source + QStringLiteral("-w4a16"));
        QVERIFY(dialog.exportButton()->isEnabled());
        QVERIFY(!dialog.attachBenchmarksBox()->isEnabled()); // nothing imported
        QCOMPARE(dialog.backendBox()->itemData(0).toString(), QStringLiteral("cpu"));
        // Taken names get a counter.
        QDir().mkpath(m_dir.filePath(QStringLiteral("taken-w4a16")));
        QCOMPARE(ExportDialog::defaultOutput(m_dir.filePath(QStringLiteral("taken"))),
                 QDir::toNativeSeparators(m_dir.filePath(QStringLiteral("taken-w4a16-2"))));
        QCOMPARE(
            ExportDialog::defaultOutput(m_dir.filePath(QStringLiteral("taken")), QStringLiteral("w8a16")),
            QDir::toNativeSeparators(m_dir.filePath(QStringLiteral("taken-w8a16"))));
        // Not among a Hugging Face cache's snapshots: in home, named after the model, not its commit hash.
        const QByteArray home = qgetenv("HOME");
        qputenv("HOME", m_dir.path().toUtf8());
        const QString snapshot =
            m_dir.filePath(QStringLiteral("hub/models--org--Eagle3-Head/snapshots/0a1b2c"));
        QDir().mkpath(snapshot);
        const QString output = ExportDialog::defaultOutput(snapshot);
        qputenv("HOME", home);
        QCOMPARE(output, QDir::toNativeSeparators(m_dir.filePath(QStringLiteral("Eagle3-Head-w4a16"))));
    }

    void exportVerifiesAndWritesCard()
    {
        ExportDialog dialog(m_checkpoint, m_plan, csvReport());
        const QString output = m_dir.filePath(QStringLiteral("out"));
        dialog.setOutputPath(output);
        dialog.targetModelEdit()->setText(QStringLiteral("poolside/Laguna-M"));
        dialog.targetPrecisionBox()->setCurrentText(QStringLiteral("FP8"));
        dialog.licenseEdit()->setText(QStringLiteral("apache-2.0"));
        QVERIFY(dialog.attachBenchmarksBox()->isEnabled());
        QVERIFY(dialog.attachBenchmarksBox()->isChecked());
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        QTest::mouseClick(dialog.exportButton(), Qt::LeftButton);
        QVERIFY(dialog.isRunning());
        QVERIFY(!dialog.exportButton()->isEnabled());
        QVERIFY(finished.wait(300000));
        QVERIFY(!dialog.isRunning());

        const auto& outcome = dialog.lastOutcome();
        QVERIFY(outcome);
        QVERIFY2(outcome->status == ExportOutcome::Status::Succeeded, qPrintable(outcome->error));
        QVERIFY(outcome->verify);
        QVERIFY2(outcome->verify->ok(), outcome->verify->summary().c_str());
        QCOMPARE(outcome->result.quantizedModules, m_plan.quantizedModules().size());
        QVERIFY(!dialog.resultLabel()->isHidden());
        QVERIFY(dialog.resultLabel()->text().contains(QStringLiteral("Verified")));
        QVERIFY(dialog.resultLabel()->text().contains(QString::fromStdString(outcome->verify->summary())));
        QVERIFY(dialog.problemList()->isHidden());
        QCOMPARE(dialog.progressBar()->value(), dialog.progressBar()->maximum());
        QVERIFY(dialog.openFolderButton()->isEnabled());
        QCOMPARE(dialog.cancelButton()->text(), QStringLiteral("Close"));
        const QImage shot = dialog.grab().toImage();
        QVERIFY(!shot.isNull());
        if (const QString keep = qEnvironmentVariable("SPARK_TEST_SNAPSHOTS"); !keep.isEmpty()) {
            shot.save(QDir(keep).filePath(QStringLiteral("export-dialog.png")));
        }

        const std::string readme =
            test::readFile(QString(output + QStringLiteral("/README.md")).toStdString());
        QVERIFY2(readme.starts_with("---\n"), readme.substr(0, 200).c_str());
        QVERIFY(readme.find("\n---\n") != std::string::npos);
        QVERIFY(readme.find("base_model:") != std::string::npos);
        QVERIFY(readme.find("license: apache-2.0") != std::string::npos);
        QVERIFY(readme.find("compressed-tensors") != std::string::npos);
        QVERIFY(readme.find("| target (verifier) | poolside/Laguna-M |") != std::string::npos);
        QVERIFY(readme.find("| target precision | FP8 |") != std::string::npos);
        QVERIFY(readme.find("w4a16_draft") != std::string::npos); // the attached benchmark tables
        QVERIFY(QFileInfo::exists(output + QStringLiteral("/config.json")));

        // Exporting again into the same (now full) folder is refused before anything starts.
        QVERIFY(!dialog.startExport());
        QVERIFY(dialog.message().contains(QStringLiteral("already exists")));
    }

    // The refusal for a taken folder wraps to several lines: the dialog makes room for it, so it is drawn
    // over none of the other controls.
    void refusalOverlapsNothing()
    {
        ExportDialog dialog(m_checkpoint, m_plan);
        dialog.resize(dialog.sizeHint());
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        dialog.setOutputPath(m_source); // exists and is not empty
        QVERIFY(!dialog.startExport());
        QApplication::processEvents();
        auto* message = dialog.findChild<QLabel*>(QStringLiteral("exportMessage"));
        QVERIFY(message && message->isVisible());
        QVERIFY(message->height() >= message->heightForWidth(message->width()));
        const QRect area(message->mapTo(&dialog, QPoint(0, 0)), message->size());
        for (QWidget* w : dialog.findChildren<QWidget*>()) {
            if (!w->isVisible() || w == message || w->isAncestorOf(message) || message->isAncestorOf(w) ||
                !qobject_cast<QAbstractButton*>(w)) {
                continue;
            }
            const QRect r(w->mapTo(&dialog, QPoint(0, 0)), w->size());
            QVERIFY2(!area.intersects(r), w->metaObject()->className());
        }
    }

    void invalidInputsBlockExport()
    {
        ExportDialog dialog(m_checkpoint, m_plan);
        dialog.setOutputPath(m_source + QStringLiteral("/inside"));
        QVERIFY(!dialog.startExport());
        QVERIFY(dialog.message().contains(QStringLiteral("inside the source")));
        dialog.outputEdit()->clear();
        QVERIFY(!dialog.startExport());
        QVERIFY(!dialog.message().isEmpty());
        QVERIFY(!dialog.isRunning());

        // A plan with an invalid regex cannot be exported at all.
        PlanOptions options;
        options.preset = "laguna-dflash";
        options.ignore = {"re:([unclosed"};
        const auto broken = makePlan(m_checkpoint->config(), infosOf(*m_checkpoint), options);
        QVERIFY(!broken.errors.empty());
        ExportDialog blocked(m_checkpoint, broken);
        QVERIFY(!blocked.exportButton()->isEnabled());
        QVERIFY(blocked.message().contains(QStringLiteral("errors")));
        QVERIFY(!blocked.startExport());
    }

    void cancelLeavesNothing()
    {
        const QString parent = m_dir.filePath(QStringLiteral("cancel"));
        QVERIFY(QDir().mkpath(parent));
        const QString output = parent + QStringLiteral("/out");
        ExportDialog dialog(m_checkpoint, m_plan);
        dialog.setOutputPath(output);
        dialog.show();
        // Hold the worker at its first progress report (a tensor is written, the staging folder exists)
        // until Cancel is pressed, so the cancel lands mid-export on any machine.
        std::atomic<bool> reached{false};
        std::atomic<bool> sawStaging{false};
        auto* runner = dialog.runner();
        runner->setWorkerHook([&, runner](std::uint64_t done, std::uint64_t total) {
            if (reached.exchange(true)) {
                return;
            }
            sawStaging = !entries(parent).isEmpty() && done < total;
            for (int i = 0; i < 3000 && !runner->isCancelRequested(); ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        });
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        QVERIFY(dialog.startExport());
        QTRY_VERIFY_WITH_TIMEOUT(reached.load(), 60000);
        QCOMPARE(dialog.cancelButton()->text(), QStringLiteral("Cancel"));
        QTest::mouseClick(dialog.cancelButton(), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QVERIFY(sawStaging.load());
        QVERIFY(dialog.lastOutcome());
        QVERIFY(dialog.lastOutcome()->status == ExportOutcome::Status::Cancelled);
        QVERIFY(!QFileInfo::exists(output));
        QCOMPARE(entries(parent), QStringList());
        QVERIFY(dialog.isVisible()); // Cancel stopped the job, not the dialog
        QVERIFY(!dialog.openFolderButton()->isEnabled());
        QVERIFY(dialog.exportButton()->isEnabled());
    }

    void mainWindowExportAction()
    {
        MainWindow window(quiet());
        QVERIFY(window.tabIds().contains(QStringLiteral("benchmarks")));
        QVERIFY(window.benchmarksTab());
        QVERIFY(window.exportAction());
        QCOMPARE(window.exportAction()->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
        QVERIFY(!window.exportAction()->isEnabled()); // nothing open, no plan
        QVERIFY(openAndWait(window, m_source, 60000));
        QTRY_VERIFY_WITH_TIMEOUT(window.currentPlan() != nullptr, 60000);
        QTRY_VERIFY(window.exportAction()->isEnabled());
        window.show();
        window.exportAction()->trigger();
        auto* dialog = window.findChild<ExportDialog*>(QStringLiteral("exportDialog"));
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QCOMPARE(dialog->outputPath(), m_source + QStringLiteral("-w4a16"));
        QVERIFY(dialog->exportButton()->isEnabled());
        // The export just made is the Compare tab's pair, ready to run.
        const QString output = m_dir.filePath(QStringLiteral("from-window"));
        dialog->setOutputPath(output);
        QSignalSpy finished(dialog, &ExportDialog::exportFinished);
        QVERIFY(dialog->startExport());
        QVERIFY(finished.wait(60000));
        QVERIFY(dialog->lastOutcome()->status == ExportOutcome::Status::Succeeded);
        QCOMPARE(QDir::cleanPath(window.compareView()->sourcePath()), QDir::cleanPath(m_source));
        QCOMPARE(QDir::cleanPath(window.compareView()->outputPath()), QDir::cleanPath(output));
        dialog->close();
    }

    void failureNamesTheFile()
    {
        // The output's parent is a file: the staging folder cannot be created; the message names the path.
        const QString blocker = m_dir.filePath(QStringLiteral("blocker"));
        test::writeFile(blocker.toStdString(), "x");
        ExportDialog dialog(m_checkpoint, m_plan);
        dialog.setOutputPath(blocker + QStringLiteral("/out"));
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        QVERIFY(dialog.startExport());
        QVERIFY(finished.wait(60000));
        QVERIFY(dialog.lastOutcome()->status == ExportOutcome::Status::Failed);
        QVERIFY2(dialog.message().contains(QStringLiteral("blocker")), qPrintable(dialog.message()));
        QVERIFY(!QFileInfo::exists(blocker + QStringLiteral("/out")));
    }
};

QTEST_MAIN(TestGuiExport)
#include "tst_gui_export.moc"
