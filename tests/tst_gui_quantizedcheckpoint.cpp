// Auditing a quantized draft in the GUI: an already-quantized draft opened in the main window shows
// `check`'s findings in the Plan tab's lint panel, each module's stored scheme in the Tensors tab, and a
// histogram of a quantized module's dequantized weights in the detail panel.
#include "audittesthelpers.h"
#include "core/audit/checker.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/compare/compareview.h"
#include "views/document/document.h"
#include "views/document/documentsnapshot.h"
#include "views/plan/lintmodel.h"
#include "views/plan/plantab.h"
#include "views/tensors/histogramplot.h"
#include "views/tensors/storedweightsection.h"
#include "views/tensors/tensorcolumns.h"
#include "views/tensors/tensorsview.h"
#include "views/tensors/tensortablemodel.h"
#include "views/tensors/tensortreemodel.h"
#include "views/window/mainwindow.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace spark;
using namespace spark::test;

namespace {

/// Rule ids of the lint panel's rows, and whether any is an error.
QStringList ruleIds(const LintModel& lint)
{
    QStringList ids;
    for (int row = 0; row < lint.rowCount(); ++row) {
        ids.append(lint.index(row, LintModel::Id).data().toString());
    }
    return ids;
}

int errorRows(const LintModel& lint)
{
    int errors = 0;
    for (int row = 0; row < lint.rowCount(); ++row) {
        errors +=
            lint.index(row, 0).data(LintModel::SeverityRole).toInt() == static_cast<int>(LintSeverity::Error);
    }
    return errors;
}

} // namespace

class TestGuiQuantizedCheckpoint : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    std::filesystem::path m_root;

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("SparkulatorTest"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_gui_quantizedcheckpoint"));
        QVERIFY(m_dir.isValid());
        m_root = m_dir.path().toStdString();
    }

    void bf16DraftKeepsThePlanLint()
    {
        MainWindow window(noSavedState());
        QVERIFY(openAndWait(window, demoSource(m_root, "glm-dspark")));
        const auto snapshot = window.document()->snapshot();
        QVERIFY(snapshot && !snapshot->isQuantized());
        PlanTab* plan = window.planTab();
        QVERIFY(!plan->lintModel()->showsCheckFindings());
        QVERIFY(plan->findChild<QLabel*>(QStringLiteral("quantizedNote"))->isHidden());
        for (const auto& row : snapshot->rows) {
            QVERIFY(row.storedScheme.isEmpty());
        }
    }

    void cleanMixedExport()
    {
        std::string error;
        const auto out = exportDemo(m_root, "glm-dspark", {"re:.*down_proj$=W8A16"}, "glm-mixed", &error);
        QVERIFY2(!out.empty(), error.c_str());
        const auto expected = checkCheckpoint(Checkpoint::open(out));
        QVERIFY2(expected.ok(), expected.summary().c_str());

        MainWindow window(noSavedState());
        QVERIFY(openAndWait(window, out));
        const auto snapshot = window.document()->snapshot();
        QVERIFY(snapshot && snapshot->isQuantized());
        // A quantized draft is offered as the Compare tab's output, not as its source.
        QCOMPARE(window.compareView()->outputPath(), QString::fromStdString(out.string()));
        QVERIFY(window.compareView()->sourcePath().isEmpty());

        // The lint panel lists check's findings, none an error, and says why it is not the plan's lint.
        PlanTab* plan = window.planTab();
        LintModel* lint = plan->lintModel();
        QAbstractItemModelTester tester(lint, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(lint->showsCheckFindings());
        QCOMPARE(lint->rowCount(), static_cast<int>(expected.findings.size()));
        QCOMPARE(errorRows(*lint), 0);
        for (std::size_t i = 0; i < expected.findings.size(); ++i) {
            QCOMPARE(ruleIds(*lint).at(static_cast<qsizetype>(i)),
                     QString::fromStdString(expected.findings[i].id));
        }
        const auto* note = plan->findChild<QLabel*>(QStringLiteral("quantizedNote"));
        QVERIFY(note && !note->isHidden());
        QVERIFY2(note->text().contains(QStringLiteral("already quantized")), qPrintable(note->text()));

        // Every quantized module shows its stored scheme in the Decision column, in both models.
        TensorsView* view = window.tensorsView();
        QStringList w4, w8;
        for (const auto& m : expected.view.modules) {
            if (m.quantizedOnDisk) {
                (m.module.name.ends_with("down_proj") ? w8 : w4)
                    .append(QString::fromStdString(m.module.name));
            }
        }
        QVERIFY(!w4.isEmpty());
        QVERIFY(!w8.isEmpty());
        const TensorTableModel* flat = view->flatModel();
        int checked = 0;
        for (int row = 0; row < flat->rowCount(); ++row) {
            const auto& r = snapshot->rows[static_cast<std::size_t>(row)];
            const QString decision = flat->index(row, TensorColumns::Decision).data().toString();
            if (w8.contains(r.module)) {
                QCOMPARE(decision, QStringLiteral("W8A16"));
                ++checked;
            } else if (w4.contains(r.module)) {
                QCOMPARE(decision, QStringLiteral("W4A16"));
                ++checked;
            }
            // No keep/quantize checkbox: a stored scheme is not a decision to toggle.
            if (!r.storedScheme.isEmpty()) {
                QVERIFY(!flat->index(row, TensorColumns::Decision).data(Qt::CheckStateRole).isValid());
            }
        }
        QVERIFY(checked >= w4.size() + w8.size());

        // The detail panel: a quantized module's dequantized weights as a non-empty histogram.
        StoredWeightSection* section = window.storedWeightSection();
        QVERIFY(section->parentWidget() && !section->parentWidget()->isHidden());
        const QString module = w8.front();
        QSignalSpy decoded(section, &StoredWeightSection::moduleDecoded);
        QVERIFY(view->selectTensor(module + QStringLiteral(".weight_packed")));
        QCOMPARE(section->module(), module);
        QVERIFY2(section->schemeText().contains(QStringLiteral("W8A16")), qPrintable(section->schemeText()));
        QVERIFY(decoded.wait(30000) || decoded.size() == 1);
        QCOMPARE(decoded.at(0).at(0).toString(), module);
        QVERIFY2(section->statsText().contains(QStringLiteral("all ")), qPrintable(section->statsText()));
        QVERIFY(section->weightPlot()->barCount() > 0);

        // Another quantized module (W4A16) replaces it; a BF16 module's tensor shows no histogram.
        QVERIFY(view->selectTensor(w4.front() + QStringLiteral(".weight_scale")));
        QVERIFY2(section->schemeText().contains(QStringLiteral("W4A16")), qPrintable(section->schemeText()));
        QVERIFY(decoded.wait(30000));
        QCOMPARE(decoded.last().at(0).toString(), w4.front());
        QVERIFY(section->weightPlot()->barCount() > 0);
    }

    void brokenConfigShowsTheRule()
    {
        // The HF names of the BF16 attention, as people write them by hand: vLLM never sees these names.
        const auto good = exportDemo(m_root, "qwen3-dflash", {}, "qwen-good");
        QVERIFY(!good.empty());
        auto e = EditableCheckpoint::load(good);
        e.quantizationConfig()["ignore"] = {"layers.0.self_attn.q_proj", "layers.0.self_attn.k_proj",
                                            "layers.0.self_attn.v_proj"};
        const auto broken = m_root / "qwen-broken";
        e.write(broken);

        MainWindow window(noSavedState());
        QVERIFY(openAndWait(window, broken));
        LintModel* lint = window.planTab()->lintModel();
        QVERIFY(lint->showsCheckFindings());
        const QStringList ids = ruleIds(*lint);
        QVERIFY2(ids.contains(QStringLiteral("ignore-literal-name")), qPrintable(ids.join(QLatin1Char(','))));
        QVERIFY2(ids.contains(QStringLiteral("bf16-not-ignored")), qPrintable(ids.join(QLatin1Char(','))));
        QVERIFY(errorRows(*lint) > 0);
        QStringList literalModules; // the Modules column of the ignore-literal-name rows
        for (int row = 0; row < lint->rowCount(); ++row) {
            const QString id = lint->index(row, LintModel::Id).data().toString();
            QVERIFY2(!LintModel::ruleDescription(id).isEmpty(), qPrintable(id));
            QVERIFY(!lint->index(row, LintModel::Message).data().toString().isEmpty());
            if (id == QStringLiteral("ignore-literal-name")) {
                literalModules.append(lint->index(row, LintModel::Modules).data().toString());
            }
        }
        QVERIFY2(literalModules.join(QLatin1Char(';')).contains(QStringLiteral("layers.0.self_attn.q_proj")),
                 qPrintable(literalModules.join(QLatin1Char(';'))));

        // Opening a BF16 draft afterwards brings the plan's lint back.
        QVERIFY(openAndWait(window, demoSource(m_root, "qwen3-dflash")));
        QVERIFY(!lint->showsCheckFindings());
        QVERIFY(window.planTab()->findChild<QLabel*>(QStringLiteral("quantizedNote"))->isHidden());
    }
};

QTEST_MAIN(TestGuiQuantizedCheckpoint)
#include "tst_gui_quantizedcheckpoint.moc"
