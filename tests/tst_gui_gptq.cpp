// GPTQ in the export dialog: off until a plan has an integer-scheme module, a capture is required, and an
// export with it writes GPTQ codes that verify (scales bit-exact) and says how GPTQ did. A plan with the
// hessian rounding asks for the capture without GPTQ and exports scales that verify.
#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "democapturehelpers.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/export/exportdialog.h"

#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace spark;
using namespace spark::test;

class TestGuiGptq : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    std::shared_ptr<const Checkpoint> m_checkpoint;
    QString m_capture;
    QString m_target;

    QuantPlan plan(const std::vector<std::string>& schemes = {}, const std::string& rounding = "rtn") const
    {
        PlanOptions options;
        options.schemes = schemes;
        options.rounding = rounding;
        return makePlan(m_checkpoint->config(), infosOf(*m_checkpoint), options);
    }

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        const auto demo = writeDemoWithCapture(m_dir.path().toStdString(), "glm-dspark", 5, 2, 40, 8);
        m_capture = QString::fromStdString(demo.capture.string());
        m_target = QString::fromStdString(demo.target.string());
        m_checkpoint = std::make_shared<const Checkpoint>(Checkpoint::open(demo.draft));
    }

    void offWithoutAnIntegerScheme()
    {
        ExportDialog fp8(m_checkpoint, plan({"Linear=FP8_DYNAMIC"}));
        QVERIFY(!fp8.gptqBox()->isEnabled());
        ExportDialog w4(m_checkpoint, plan());
        QVERIFY(w4.gptqBox()->isEnabled());
        QVERIFY(!w4.captureEdit()->isEnabled());
        w4.gptqBox()->setChecked(true);
        QVERIFY(w4.captureEdit()->isEnabled());
        QVERIFY(w4.gptqTargetEdit()->isEnabled());
    }

    void captureIsRequired()
    {
        ExportDialog dialog(m_checkpoint, plan());
        dialog.setOutputPath(m_dir.filePath(QStringLiteral("never")));
        dialog.gptqBox()->setChecked(true);
        QVERIFY(!dialog.startExport());
        QVERIFY2(dialog.message().contains(QStringLiteral("capture")), qPrintable(dialog.message()));
        dialog.captureEdit()->setText(m_dir.filePath(QStringLiteral("missing.safetensors")));
        QVERIFY(!dialog.startExport());
        QVERIFY2(dialog.message().contains(QStringLiteral("does not exist")), qPrintable(dialog.message()));
        QVERIFY(!QFileInfo::exists(m_dir.filePath(QStringLiteral("never"))));
    }

    void exportWithGptqVerifies()
    {
        const auto p = plan();
        ExportDialog dialog(m_checkpoint, p);
        const QString output = m_dir.filePath(QStringLiteral("gptq-out"));
        dialog.setOutputPath(output);
        dialog.gptqBox()->setChecked(true);
        dialog.captureEdit()->setText(m_capture);
        dialog.gptqTargetEdit()->setText(m_target);
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        QTest::mouseClick(dialog.exportButton(), Qt::LeftButton);
        QVERIFY(dialog.isRunning());
        QVERIFY(!dialog.gptqBox()->isEnabled() && !dialog.captureEdit()->isEnabled());
        QVERIFY(finished.wait(300000));
        const auto& outcome = dialog.lastOutcome();
        QVERIFY(outcome);
        QVERIFY2(outcome->status == ExportOutcome::Status::Succeeded, qPrintable(outcome->error));
        QVERIFY(outcome->verify);
        QVERIFY2(outcome->verify->ok(), outcome->verify->summary().c_str());
        QVERIFY(outcome->verify->gptqModules > 0);
        QVERIFY(outcome->calibrationSummary.startsWith(QStringLiteral("GPTQ on ")));
        QVERIFY(dialog.resultLabel()->text().contains(QStringLiteral("GPTQ on ")));
        QVERIFY(dialog.gptqBox()->isEnabled() && dialog.captureEdit()->isEnabled());
        const auto config = Checkpoint::open(output.toStdString()).config();
        QCOMPARE(config["quantization_config"]["config_groups"]["group_0"]["weights"]["observer_kwargs"]
                       ["sparkulator_codes"]
                           .get<std::string>(),
                 std::string("gptq"));
        QVERIFY(!QFileInfo::exists(output + QStringLiteral(".calibration")));
    }

    void hessianRoundingAsksForTheCapture()
    {
        ExportDialog dialog(m_checkpoint, plan({}, "hessian"));
        QVERIFY(!dialog.gptqBox()->isChecked() && dialog.captureEdit()->isEnabled());
        const QString output = m_dir.filePath(QStringLiteral("hessian-out"));
        dialog.setOutputPath(output);
        QVERIFY(!dialog.startExport());
        QVERIFY2(dialog.message().contains(QStringLiteral("hessian rounding")), qPrintable(dialog.message()));
        dialog.captureEdit()->setText(m_capture);
        dialog.gptqTargetEdit()->setText(m_target);
        QSignalSpy finished(&dialog, &ExportDialog::exportFinished);
        QTest::mouseClick(dialog.exportButton(), Qt::LeftButton);
        QVERIFY(finished.wait(300000));
        const auto& outcome = dialog.lastOutcome();
        QVERIFY(outcome);
        QVERIFY2(outcome->status == ExportOutcome::Status::Succeeded, qPrintable(outcome->error));
        QVERIFY(outcome->verify);
        QVERIFY2(outcome->verify->ok(), outcome->verify->summary().c_str());
        QVERIFY(outcome->verify->capturedScaleModules > 0 && outcome->verify->gptqModules == 0);
        QVERIFY2(outcome->calibrationSummary.startsWith(QStringLiteral("Hessian-chosen scales on ")),
                 qPrintable(outcome->calibrationSummary));
    }
};

QTEST_MAIN(TestGuiGptq)
#include "tst_gui_gptq.moc"
