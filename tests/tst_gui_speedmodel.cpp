// The speed model in the GUI: the Benchmarks tab's panel on the bundled samples (a drafter time
// in, k* per cell out of the panel's table), the GLM worked example with a quantized saving (table, plot,
// the report the export attaches to the card), an inconsistent drafter time naming the cell, the drafter
// kind from the open draft, and the Plan tab's summary predicting tok/s and k* for a plan.
#include "core/bench/benchimport.h"
#include "core/bench/speedmodel.h"
#include "core/bench/speedmodelplan.h"
#include "core/demo/demodraft.h"
#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/bench/benchmarkstab.h"
#include "views/bench/benchplotqcp.h"
#include "views/bench/speedmodelpanel.h"
#include "views/plan/summarybar.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

using namespace spark;
using namespace spark::test;

namespace {

const char* const kCsv = "spec_decode_repeats_long.csv";
const char* const kGlmBf16 = "glm-dspark-bf16-infqps-concurrency1-GLM-5.2-20260301-101500.json";
const char* const kGlmW4 = "glm-dspark-w4a16-infqps-concurrency1-GLM-5.2-20260301-104000.json";

// The table's text in the row of (arm, prompt length).
QString cellText(const SpeedModelPanel& panel, const QString& arm, long long len, int column)
{
    const auto* table = panel.table();
    for (int row = 0; row < table->rowCount(); ++row) {
        if (table->item(row, SpeedModelPanel::ArmColumn)->text() == arm &&
            table->item(row, SpeedModelPanel::PromptColumn)->data(Qt::UserRole).toLongLong() == len) {
            const auto* item = table->item(row, column);
            return item ? item->text() : QString();
        }
    }
    return QStringLiteral("(no row)");
}

int graphsWithData(QCustomPlot& plot)
{
    int count = 0;
    for (int i = 0; i < plot.graphCount(); ++i) {
        count += plot.graph(i)->dataCount() > 0 ? 1 : 0;
    }
    return count;
}

} // namespace

class TestGuiSpeedModel : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QLocale::setDefault(QLocale::c());
        QVERIFY(m_dir.isValid());
    }

    void samplesBestK()
    {
        BenchmarksTab tab;
        auto* panel = tab.speedModelPanel();
        QVERIFY(panel);
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        // No drafter time yet: no model, the panel asks for one.
        QVERIFY(!panel->model());
        QCOMPARE(panel->table()->rowCount(), 0);

        panel->kindInput()->setCurrentIndex(1); // chain
        QSignalSpy modelChanged(panel, &SpeedModelPanel::modelChanged);
        panel->drafterMsInput()->setValue(36);
        QVERIFY(modelChanged.count() >= 1);
        QVERIFY(panel->model());
        QVERIFY2(panel->errorText().isEmpty(), qPrintable(panel->errorText()));
        QCOMPARE(panel->table()->rowCount(), 6);
        // Chain drafter, t_D = 36 ms, v = 0 (worked out from the CSV by speed-model.md §3): a drafter that
        // takes most of a cycle moves k* below the measured k = 3, and a faster arm further.
        QCOMPARE(panel->shownBestK(QStringLiteral("bf16_draft"), 512), 2);
        QCOMPARE(panel->shownBestK(QStringLiteral("bf16_draft"), 8192), 2);
        QCOMPARE(panel->shownBestK(QStringLiteral("w4a16_draft"), 512), 1);
        QCOMPARE(panel->shownBestK(QStringLiteral("w4a16_draft"), 2048), 1);
        // τ(k) is the acceptance length and D(k) the measured tok/s (bf16_draft at 512: 47.05 tok/s).
        QCOMPARE(cellText(*panel, QStringLiteral("bf16_draft"), 512, SpeedModelPanel::TauColumn),
                 QStringLiteral("2.894"));
        QVERIFY(cellText(*panel, QStringLiteral("bf16_draft"), 512, SpeedModelPanel::RatesColumn)
                    .endsWith(QStringLiteral(", 47.05")));
        QCOMPARE(cellText(*panel, QStringLiteral("bf16_draft"), 512, SpeedModelPanel::RatesColumn),
                 QStringLiteral("39.21, 48.33, 49.13, 47.05"));

        panel->drafterMsInput()->setValue(30);
        QCOMPARE(panel->shownBestK(QStringLiteral("bf16_draft"), 8192), 3);
        QCOMPARE(panel->shownBestK(QStringLiteral("bf16_draft"), 512), 2);
        panel->kindInput()->setCurrentIndex(2); // block: one forward whatever j, so k* stays at 3 here
        QCOMPARE(panel->shownBestK(QStringLiteral("w4a16_draft"), 512), 3);
        QCOMPARE(panel->model()->kind, DrafterKind::Block);

        // The plot: at the first prompt length, each arm's predicted curve and its measured point.
        auto* plot = panel->plot();
        QCOMPARE(panel->promptLenInput()->count(), 3);
        QCOMPARE(graphsWithData(*plot), 4);
        QCOMPARE(plot->graph(0)->dataCount(), 4); // j = 0..3
        // The model is in the report the export attaches to the card, and in the Markdown.
        QVERIFY(tab.currentReport() && tab.currentReport()->speedModel);
        QVERIFY(tab.markdown().contains(QStringLiteral("Speed model: predicted decode tok/s against k")));
    }

    void glmQuantizedArm()
    {
        BenchmarksTab tab;
        auto* panel = tab.speedModelPanel();
        QVERIFY(importAndWait(tab, {benchSample(kGlmBf16), benchSample(kGlmW4)}));
        panel->kindInput()->setCurrentIndex(2); // DSpark: block
        panel->savingMsInput()->setValue(7.9);
        panel->drafterMsInput()->setValue(15.88);
        QVERIFY2(panel->errorText().isEmpty(), qPrintable(panel->errorText()));
        const QString bf16 = QStringLiteral("bf16_draft");
        // speed-model.md §5.
        QCOMPARE(panel->shownBestK(bf16, 2048), 2);
        QCOMPARE(cellText(*panel, bf16, 2048, SpeedModelPanel::TauColumn), QStringLiteral("2.033"));
        QCOMPARE(cellText(*panel, bf16, 2048, SpeedModelPanel::CycleColumn), QStringLiteral("100.6"));
        QCOMPARE(cellText(*panel, bf16, 2048, SpeedModelPanel::RatesColumn),
                 QStringLiteral("11.80, 16.36, 20.21"));
        QCOMPARE(cellText(*panel, bf16, 2048, SpeedModelPanel::QuantizedRateColumn), QStringLiteral("21.93"));
        QCOMPARE(cellText(*panel, bf16, 2048, SpeedModelPanel::QuantizedChangeColumn),
                 QStringLiteral("+8.522 %"));
        QCOMPARE(cellText(*panel, bf16, 2048, SpeedModelPanel::QuantizedBestKColumn), QStringLiteral("2"));
        QCOMPARE(cellText(*panel, bf16, 2048, SpeedModelPanel::MeasuredColumn), QStringLiteral("21.97"));
        QCOMPARE(cellText(*panel, bf16, 2048, SpeedModelPanel::ResidualColumn), QStringLiteral("+0.1721 %"));
        // Plot: two arms (curve + measured point each), the quantized prediction and the residual segment.
        auto* plot = panel->plot();
        QCOMPARE(graphsWithData(*plot), 6);
        bool dashed = false;
        bool residual = false;
        for (int i = 0; i < plot->graphCount(); ++i) {
            dashed = dashed || plot->graph(i)->pen().style() == Qt::DashLine;
            residual = residual || plot->graph(i)->name().contains(QStringLiteral("predicted vs measured"));
        }
        QVERIFY(dashed && residual);
        // The card gets the predicted and measured change side by side.
        const auto report = tab.currentReport();
        QVERIFY(report && report->speedModel);
        QVERIFY(report->speedModel->cell("bf16_draft", 2048)->quantized->measured);
    }

    void inconsistentDrafterTimeNamesTheCell()
    {
        BenchmarksTab tab;
        auto* panel = tab.speedModelPanel();
        QVERIFY(importAndWait(tab, {benchSample(kGlmBf16)}));
        panel->drafterMsInput()->setValue(500); // longer than the 100.6 ms cycle
        QVERIFY(!panel->model());
        QVERIFY2(panel->errorText().contains(QStringLiteral("arm 'bf16_draft' at prompt length 2048")),
                 qPrintable(panel->errorText()));
        QCOMPARE(panel->table()->rowCount(), 0);
        panel->drafterMsInput()->setValue(15.88);
        QVERIFY(panel->model());
        QVERIFY(panel->errorText().isEmpty());
    }

    void kindFromTheOpenDraft()
    {
        BenchmarksTab tab;
        auto* panel = tab.speedModelPanel();
        QVERIFY(importAndWait(tab, {benchSample(kGlmBf16)}));
        panel->drafterMsInput()->setValue(15.88);
        QCOMPARE(panel->kindInput()->currentIndex(), 0);    // from the open draft
        QCOMPARE(panel->model()->kind, DrafterKind::Chain); // none open: assumed
        panel->setArchitectureKind(DrafterKind::Block, QStringLiteral("DSpark"));
        QCOMPARE(panel->model()->kind, DrafterKind::Block);
        QCOMPARE(panel->model()->kindBasis, std::string("DSpark architecture"));
        QCOMPARE(panel->shownBestK(QStringLiteral("bf16_draft"), 2048), 2);
        panel->kindInput()->setCurrentIndex(1); // overridden
        QCOMPARE(panel->model()->kind, DrafterKind::Chain);
    }

    void planSummaryPredictsTokS()
    {
        // A GLM DSpark demo draft planned with the defaults, and the GLM benchmarks of its BF16 draft.
        const auto folder = std::filesystem::path(m_dir.path().toStdString()) / "glm-dspark";
        writeDemoDraft(describeDemoDraft("glm-dspark", DemoScale::Tiny), folder, {});
        const auto checkpoint = Checkpoint::open(folder);
        auto plan = std::make_shared<const QuantPlan>(
            makePlan(checkpoint.config(), infosOf(checkpoint), PlanOptions{}));
        QVERIFY(plan->errors.empty());
        QVERIFY(plan->sizes.streamedAfter < plan->sizes.streamedBefore);
        const auto imported = importBenchFiles({test::dataPath(std::string("bench/") + kGlmBf16),
                                                test::dataPath(std::string("bench/") + kGlmW4)});
        auto report = std::make_shared<const BenchReport>(buildBenchReport(imported.records));

        SummaryBar bar;
        bar.setPlan(plan);
        bar.drafterMsInput()->setValue(15.88);
        QVERIFY(bar.speedText().isEmpty()); // no benchmarks yet: drafter milliseconds only
        bar.setBenchmarks(report);
        const QString text = bar.speedText();
        // The same numbers as core's model with this plan's bytes: block drafter (DSpark), t_D = one step.
        SpeedModelOptions options;
        applyPlan(options, *plan, false);
        QCOMPARE(options.kind, DrafterKind::Block);
        options.drafterMs = 15.88;
        const auto model = computeSpeedModel(*report, options);
        const auto& q = *model.cell("bf16_draft", 2048)->quantized;
        QVERIFY2(text.contains(QStringLiteral("Predicted decode at prompt length 2048: 20.21 → ")),
                 qPrintable(text));
        QVERIFY2(text.contains(
                     QStringLiteral("→ %1 tok/s")
                         .arg(QLocale::c().toString(q.predictedTokS, 'f', q.predictedTokS >= 100 ? 1 : 2))),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("best k 2 → %1").arg(q.bestK)), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("measured 'w4a16_draft': 21.97 tok/s")));
        QVERIFY(q.predictedTokS > 20.21);
        // A drafter step the cycle cannot hold is core's error, naming the cell.
        bar.drafterMsInput()->setValue(200);
        QVERIFY2(bar.speedText().contains(QStringLiteral("arm 'bf16_draft' at prompt length 2048")),
                 qPrintable(bar.speedText()));
        bar.setBenchmarks(nullptr);
        QVERIFY(bar.speedText().isEmpty());
    }
};

QTEST_MAIN(TestGuiSpeedModel)
#include "tst_gui_speedmodel.moc"
