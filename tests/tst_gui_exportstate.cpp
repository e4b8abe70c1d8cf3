// The export dialog's state between attempts: a new attempt clears the last result,
// every refusal says what to do, and the inputs (Browse included) are locked while an export runs.
#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/export/exportdialog.h"

#include <QComboBox>
#include <QDir>
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
using spark::test::writeTinyDemo;

class TestGuiExportState : public QObject
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
        PlanOptions options;
        options.preset = "laguna-dflash";
        m_plan = makePlan(m_checkpoint->config(), test::infosOf(*m_checkpoint), options);
        QVERIFY(m_plan.errors.empty());
    }

    void refusalsSayWhatToDo()
    {
        ExportDialog dialog(m_checkpoint, m_plan);
        dialog.setOutputPath(m_source);
        QVERIFY(!dialog.startExport());
        QVERIFY2(dialog.message().contains(QStringLiteral("is the source draft's folder")),
                 qPrintable(dialog.message()));

        dialog.setOutputPath(m_source + QStringLiteral("/sub"));
        QVERIFY(!dialog.startExport());
        QVERIFY(dialog.message().contains(QStringLiteral("inside the source")));

        const QString file = m_dir.filePath(QStringLiteral("a-file"));
        test::writeFile(file.toStdString(), "x");
        dialog.setOutputPath(file);
        QVERIFY(!dialog.startExport());
        QVERIFY2(dialog.message().contains(QStringLiteral("is a file")), qPrintable(dialog.message()));

        const QString full = m_dir.filePath(QStringLiteral("full"));
        QVERIFY(QDir().mkpath(full + QStringLiteral("/x")));
        QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("full-2"))));
        dialog.setOutputPath(full);
        QVERIFY(!dialog.startExport());
        const QString expected = m_dir.filePath(QStringLiteral("full-3"));
        QCOMPARE(dialog.suggestedOutput(), expected);
        QVERIFY2(
            dialog.message().contains(QStringLiteral("not empty: choose another folder or let Sparkulator "
                                                     "name it ") +
                                      QDir::toNativeSeparators(expected)),
            qPrintable(dialog.message()));
        // The message's link takes the offered name.
        auto* label = dialog.findChild<QLabel*>(QStringLiteral("exportMessage"));
        QVERIFY(label);
        QVERIFY(label->text().contains(QStringLiteral("href")));
        Q_EMIT label->linkActivated(QStringLiteral("use"));
        QCOMPARE(dialog.outputPath(), expected);
        QVERIFY(dialog.message().isEmpty());

        dialog.outputEdit()->clear();
        QVERIFY(!dialog.startExport());
        QVERIFY(dialog.message().contains(QStringLiteral("Browse")));
        QVERIFY(!dialog.isRunning());
    }

    // A failed attempt's message and an earlier success's result vanish when the next attempt starts.
    void newAttemptClearsResult()
    {
        ExportDialog dialog(m_checkpoint, m_plan);
        const QString output = m_dir.filePath(QStringLiteral("first"));
        dialog.setOutputPath(output);
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        QVERIFY(dialog.startExport());
        QVERIFY(finished.wait(300000));
        QVERIFY(dialog.lastOutcome());
        QVERIFY(dialog.lastOutcome()->status == ExportOutcome::Status::Succeeded);
        QVERIFY(!dialog.resultLabel()->isHidden());
        QVERIFY(!dialog.progressLabel()->text().isEmpty());
        QVERIFY(dialog.openFolderButton()->isEnabled());

        // Refused: the old verdict, progress and Open Folder go; only the refusal is shown.
        QVERIFY(!dialog.startExport());
        QVERIFY(dialog.resultLabel()->isHidden());
        QVERIFY(dialog.resultLabel()->text().isEmpty());
        QVERIFY(dialog.problemList()->isHidden());
        QVERIFY(dialog.progressLabel()->text().isEmpty());
        QCOMPARE(dialog.progressBar()->value(), 0);
        QVERIFY(!dialog.openFolderButton()->isEnabled());
        QVERIFY(!dialog.lastOutcome());
        QVERIFY(dialog.message().contains(QStringLiteral("not empty")));

        // The next attempt that starts clears the refusal.
        dialog.setOutputPath(m_dir.filePath(QStringLiteral("second")));
        QVERIFY(dialog.startExport());
        QVERIFY(dialog.message().isEmpty());
        QVERIFY(dialog.resultLabel()->isHidden());
        QVERIFY(finished.wait(300000));
    }

    void inputsLockedWhileRunning()
    {
        ExportDialog dialog(m_checkpoint, m_plan);
        dialog.setOutputPath(m_dir.filePath(QStringLiteral("locked")));
        std::atomic<bool> reached{false};
        auto* runner = dialog.runner();
        runner->setWorkerHook([&, runner](std::uint64_t, std::uint64_t) {
            if (reached.exchange(true)) {
                return;
            }
            for (int i = 0; i < 3000 && !runner->isCancelRequested(); ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        });
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        QVERIFY(dialog.startExport());
        QTRY_VERIFY_WITH_TIMEOUT(reached.load(), 60000);
        QVERIFY(!dialog.browseButton()->isEnabled());
        QVERIFY(!dialog.outputEdit()->isEnabled());
        QVERIFY(!dialog.shardSizeBox()->isEnabled());
        QVERIFY(!dialog.exportButton()->isEnabled());
        dialog.reject(); // cancel
        QVERIFY(finished.wait(60000));
        QVERIFY(dialog.browseButton()->isEnabled());
        QVERIFY(dialog.outputEdit()->isEnabled());
        QVERIFY(dialog.exportButton()->isEnabled());
    }
};

QTEST_MAIN(TestGuiExportState)
#include "tst_gui_exportstate.moc"
