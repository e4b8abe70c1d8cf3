// The Acceptance tab: offline acceptance of the open draft on a synthetic capture, run in the background
// from the panel's inputs; BF16 against itself, the Plan tab's plan with the speed model, a bad capture,
// cancel, drops, and the per-unit sensitivity handed to the Budget tab as α.
#include "capturepatcher.h"
#include "core/demo/democapture.h"
#include "core/forward/acceptancespeed.h"
#include "core/io/checkpoint.h"
#include "guitesthelpers.h"
#include "views/acceptance/acceptancepanel.h"
#include "views/acceptance/acceptanceplot.h"
#include "views/acceptance/acceptancepositionmodel.h"
#include "views/acceptance/acceptancerunner.h"
#include "views/acceptance/sensitivitymodel.h"
#include "views/bench/benchplot.h"
#include "views/bench/benchplotqcp.h"
#include "views/plan/budgetpanel.h"
#include "views/plan/sweepjob.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QLocale>
#include <QMimeData>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <memory>

using namespace spark;
using namespace spark::test;

class TestGuiAcceptance : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_draft, m_capture, m_target;
    std::unique_ptr<MainWindow> m_window;
    AcceptancePanel* m_panel = nullptr;

    /// Sets the common inputs: the capture, the target when the demo needs one, k and anchors.
    void setInputs(int k, int anchors)
    {
        m_panel->captureEdit()->setText(m_capture);
        m_panel->targetEdit()->setText(m_target);
        m_panel->kSpin()->setValue(k);
        m_panel->anchorsSpin()->setValue(anchors);
        m_panel->seedSpin()->setValue(3);
    }

    /// Clicks @p button and waits for the runner's result (cancelled jobs report an empty one).
    AcceptanceJobResult clickAndWait(QPushButton* button)
    {
        QSignalSpy finished(m_panel->runner(), &AcceptanceRunner::finished);
        button->click();
        if (!m_panel->runner()->isRunning() && finished.isEmpty()) {
            return {}; // rejected before any job started (the status line says why)
        }
        if (finished.isEmpty() && !finished.wait(180000)) {
            return {};
        }
        return finished.front().front().value<AcceptanceJobResult>();
    }

    // Check Capture's report, once it is in.
    QString checkCapture()
    {
        m_panel->checkCaptureButton()->click();
        if (!QTest::qWaitFor([this] { return m_panel->checkCaptureButton()->isEnabled(); }, 60000)) {
            return {};
        }
        return m_panel->statusText();
    }

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY(m_dir.isValid());
        const auto demo = describeDemoDraft("qwen3-dflash", DemoScale::Tiny);
        m_draft = m_dir.filePath(QStringLiteral("draft"));
        writeDemoDraft(demo, m_draft.toStdString(), {.seed = 1, .threads = 2});
        DemoCaptureOptions options;
        options.samples = 3;
        options.length = 40;
        options.prompt = 8;
        options.threads = 2;
        const QString captureDir = m_dir.filePath(QStringLiteral("capture"));
        writeDemoCapture(demo, m_draft.toStdString(), captureDir.toStdString(), options);
        m_capture = captureDir + QStringLiteral("/hidden_states.safetensors");
        if (describeDemoTarget(demo)) {
            m_target = captureDir + QStringLiteral("/target");
        }
        m_window = std::make_unique<MainWindow>(quiet());
        QVERIFY(m_window->tabIds().contains(QStringLiteral("acceptance")));
        QVERIFY(openAndWait(*m_window, m_draft));
        m_panel = m_window->findChild<AcceptancePanel*>();
        QVERIFY(m_panel);
    }

    void cleanupTestCase() { m_window.reset(); }

    void tabFitsThePreferredWindow()
    {
        // The tab must not make the main window grow: every other tab is laid out for preferredSize().
        const QSize need = m_panel->minimumSizeHint();
        const QSize have = m_window->preferredSize();
        QVERIFY2(need.width() <= have.width() * 9 / 10 && need.height() <= have.height() * 8 / 10,
                 qPrintable(QStringLiteral("needs %1x%2 of %3x%4")
                                .arg(need.width())
                                .arg(need.height())
                                .arg(have.width())
                                .arg(have.height())));
    }

    void bf16AgainstItselfHasNoFlips()
    {
        setInputs(3, 40);
        // The draft folder itself as the "quantized" checkpoint: the same weights on both sides.
        m_panel->checkpointRadio()->setChecked(true);
        m_panel->quantizedEdit()->setText(m_draft);
        QAbstractItemModelTester tester(m_panel->positionModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QVERIFY(result.run);
        auto* table = m_panel->findChild<QTableView*>(QStringLiteral("acceptancePositions"));
        QVERIFY(table);
        QCOMPARE(table->model()->rowCount(), 3);
        const auto* model = m_panel->positionModel();
        for (int row = 0; row < 3; ++row) {
            const auto value = [&](int column) {
                return model->index(row, column).data(AcceptancePositionModel::ValueRole).toDouble();
            };
            QCOMPARE(value(AcceptancePositionModel::FlipRate), 0.0);
            QCOMPARE(value(AcceptancePositionModel::Delta), 0.0);
            QCOMPARE(value(AcceptancePositionModel::AcceptQuant), value(AcceptancePositionModel::AcceptBase));
        }
        QCOMPARE(result.run->summary.anchors, 40);
        QCOMPARE(result.run->summary.tauDelta, 0.0);
        QVERIFY2(m_panel->tauText().contains(QStringLiteral("τ(3)")), qPrintable(m_panel->tauText()));
        // Two bar series with their error bars.
        QCOMPARE(m_panel->plot()->plot()->plottableCount(), 4);
        // A checkpoint gives no streamed bytes: without a saving the speed model says what it needs.
        m_panel->drafterMsSpin()->setValue(2);
        m_panel->cycleMsSpin()->setValue(20);
        QVERIFY2(m_panel->speedText().contains(QStringLiteral("saving")), qPrintable(m_panel->speedText()));
        m_panel->savingMsSpin()->setValue(1);
        // Acceptance unchanged: the measured change is the cycle ratio's, 20 / 19 − 1 = +5.26 %.
        const QString ratio = QLocale().toString(100 * (20.0 / 19.0 - 1), 'f', 2);
        QVERIFY2(m_panel->speedText().startsWith(QStringLiteral("Predicted decode tok/s: +") + ratio),
                 qPrintable(m_panel->speedText()));
        m_panel->savingMsSpin()->setValue(0);
        m_panel->drafterMsSpin()->setValue(0);
        m_panel->cycleMsSpin()->setValue(0);
    }

    void planRunPredictsSpeed()
    {
        setInputs(2, 32);
        m_panel->planRadio()->setChecked(true);
        const auto result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QVERIFY(result.run);
        QCOMPARE(m_panel->positionModel()->rowCount(), 2);
        const auto& run = *result.run;
        QVERIFY(run.summary.paired);
        QVERIFY(run.streamedAfter < run.streamedBefore);
        QVERIFY2(m_panel->tauText().contains(QString::fromStdString(run.quantizedName)),
                 qPrintable(m_panel->tauText()));
        m_panel->drafterMsSpin()->setValue(4);
        m_panel->cycleMsSpin()->setValue(40);
        // The panel's numbers are core's (the CLI prints the same).
        AcceptanceSpeedInputs inputs{4, 40, std::nullopt, run.streamedBefore, run.streamedAfter};
        const auto speed = predictAcceptanceSpeed(run.summary, inputs);
        const QString expected = QLocale().toString(100 * speed.changeMeasured, 'f', 2);
        QVERIFY2(m_panel->speedText().contains(expected),
                 qPrintable(m_panel->speedText() + QStringLiteral(" / ") + expected));
        // A cycle shorter than the drafter time is an input error shown in place, not a crash.
        m_panel->cycleMsSpin()->setValue(3);
        QVERIFY2(m_panel->speedText().contains(QStringLiteral("longer")), qPrintable(m_panel->speedText()));
        m_panel->drafterMsSpin()->setValue(0);
        m_panel->cycleMsSpin()->setValue(0);
    }

    void bf16ActivationsWithTheirFloor()
    {
        setInputs(2, 32);
        m_panel->planRadio()->setChecked(true);
        m_panel->bf16ActivationsBox()->setChecked(true);
        m_panel->numericsFloorBox()->setChecked(true);
        const auto result = clickAndWait(m_panel->runButton());
        m_panel->bf16ActivationsBox()->setChecked(false);
        m_panel->numericsFloorBox()->setChecked(false);
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QVERIFY(result.run && result.run->numericsFloor);
        const auto& floor = *result.run->numericsFloor;
        QCOMPARE(floor.other, ForwardNumerics::Fp32);
        QCOMPARE(floor.summary.anchors, result.run->summary.anchors);
        QVERIFY(floor.firstDiffers <= floor.anyDiffers && floor.anyDiffers <= 1.0);
        QVERIFY2(m_panel->tauText().contains(QStringLiteral("Numerics floor: with FP32 activations")),
                 qPrintable(m_panel->tauText()));
    }

    void temperatureAndDraftSamplingReachTheRun()
    {
        // The drafting choice waits for a temperature; a run at T > 0 measures every proposal by its
        // acceptance probability (the BF16 side equal to core's on the same inputs), and says so beside τ.
        setInputs(2, 24);
        m_panel->planRadio()->setChecked(true);
        QVERIFY(!m_panel->draftSamplingBox()->isEnabled());
        m_panel->temperatureBox()->setValue(0.8);
        QVERIFY(m_panel->draftSamplingBox()->isEnabled());
        m_panel->draftSamplingBox()->setCurrentIndex(
            m_panel->draftSamplingBox()->findText(QStringLiteral("probabilistic")));
        const auto result = clickAndWait(m_panel->runButton());
        m_panel->temperatureBox()->setValue(0);
        QVERIFY(!m_panel->draftSamplingBox()->isEnabled());
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QVERIFY(result.run && result.run->summary.sampled);
        for (const auto& o : result.run->outcomes) {
            QCOMPARE(static_cast<int>(o.base.acceptance.size()), 2);
        }
        AcceptanceJob job;
        job.draft = m_draft.toStdString();
        job.capture = m_capture.toStdString();
        job.target = m_target.toStdString();
        job.options.k = 2;
        job.options.anchorCount = 24;
        job.options.seed = 3;
        job.options.temperature = 0.8;
        job.options.drafting = DraftSampling::Probabilistic;
        const auto expected = runAcceptance(job).summary;
        QCOMPARE(result.run->summary.tauBase, expected.tauBase); // the BF16 side, whatever the plan
        QVERIFY2(m_panel->tauText().contains(QStringLiteral("at T = 0.80 (probabilistic drafting)")),
                 qPrintable(m_panel->tauText()));
    }

    void badCaptureNamesTheFile()
    {
        const QString bad = m_dir.filePath(QStringLiteral("broken.safetensors"));
        writeFile(bad.toStdString(), "this is not a safetensors file");
        setInputs(2, 16);
        m_panel->planRadio()->setChecked(true);
        m_panel->captureEdit()->setText(bad);
        const auto result = clickAndWait(m_panel->runButton());
        QVERIFY(!result.run);
        QVERIFY(!result.error.isEmpty());
        QVERIFY2(m_panel->statusText().contains(bad), qPrintable(m_panel->statusText()));
        QCOMPARE(m_panel->positionModel()->rowCount(), 0);
        QVERIFY(m_panel->runButton()->isEnabled());

        // A path that does not exist is refused before any job starts.
        const QString missing = m_dir.filePath(QStringLiteral("nowhere.safetensors"));
        m_panel->captureEdit()->setText(missing);
        QSignalSpy finished(m_panel->runner(), &AcceptanceRunner::finished);
        m_panel->runButton()->click();
        QVERIFY(!m_panel->runner()->isRunning());
        QCOMPARE(finished.count(), 0);
        QVERIFY2(m_panel->statusText().contains(QStringLiteral("nowhere.safetensors")),
                 qPrintable(m_panel->statusText()));
    }

    void captureDefectsComeWithTheNumbers()
    {
        // Three zero rows in sample 1: the run goes on and the status says where.
        const auto copy = [&](const char* name) {
            const auto path = std::filesystem::path(m_dir.filePath(QString::fromLatin1(name)).toStdString());
            std::filesystem::copy_file(m_capture.toStdString(), path);
            std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                                         std::filesystem::perm_options::add);
            return path;
        };
        const auto zeroRows = copy("zero-rows.safetensors");
        {
            test::CapturePatcher p(zeroRows);
            for (std::int64_t t = 10; t < 13; ++t) {
                p.setRow(1, t, 0, test::kBf16Zero);
            }
        }
        setInputs(2, 0); // every anchor: a run checks the samples it reads
        m_panel->planRadio()->setChecked(true);
        m_panel->captureEdit()->setText(QString::fromStdString(zeroRows.string()));
        auto result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.run, qPrintable(result.error));
        QVERIFY2(m_panel->statusText().contains(QStringLiteral("Warning:")) &&
                     m_panel->statusText().contains(QStringLiteral("sample 1")),
                 qPrintable(m_panel->statusText()));
        // Every row of a layer zero in sample 0: refused, naming the file and the sample.
        const auto allZero = copy("all-zero.safetensors");
        {
            test::CapturePatcher p(allZero);
            for (std::int64_t t = 0; t < p.length(0); ++t) {
                p.setRow(0, t, 0, test::kBf16Zero);
            }
        }
        m_panel->captureEdit()->setText(QString::fromStdString(allZero.string()));
        result = clickAndWait(m_panel->runButton());
        QVERIFY(!result.run);
        QVERIFY2(result.error.contains(QStringLiteral("all-zero.safetensors: sample 0")),
                 qPrintable(result.error));
        QVERIFY(m_panel->statusText().contains(QStringLiteral("vllm#46301")));

        // Check Capture lists the defects without running a draft.
        m_panel->checkCapture();
        QTRY_VERIFY_WITH_TIMEOUT(m_panel->checkCaptureButton()->isEnabled(), 30000);
        QVERIFY2(m_panel->statusText().contains(QStringLiteral("error: sample 0")),
                 qPrintable(m_panel->statusText()));
        m_panel->captureEdit()->setText(m_capture);
        m_panel->checkCapture();
        QTRY_VERIFY_WITH_TIMEOUT(m_panel->checkCaptureButton()->isEnabled(), 30000);
        QVERIFY2(m_panel->statusText().contains(QStringLiteral("none is zero or constant")),
                 qPrintable(m_panel->statusText()));
    }

    void exportsRatesForVllm()
    {
        setInputs(3, 40);
        m_panel->planRadio()->setChecked(true);
        QVERIFY(!m_panel->exportRatesButton()->isEnabled() || m_panel->lastRun());
        const auto result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.run, qPrintable(result.error));
        QVERIFY(m_panel->exportRatesButton()->isEnabled());
        const QString file = m_dir.filePath(QStringLiteral("rates.json"));
        QVERIFY(m_panel->exportRates(file));
        const auto json = readJsonFile(file.toStdString());
        const auto& config = json.at("speculative_config");
        QCOMPARE(config.at("num_speculative_tokens").get<int>(), 3);
        QCOMPARE(config.at("rejection_sample_method").get<std::string>(), std::string("synthetic"));
        QCOMPARE(json.at("source").at("rates_of").get<std::string>(), std::string("quantized"));
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(config.at("synthetic_acceptance_rates").at(i).get<double>(),
                     result.run->summary.positions[static_cast<std::size_t>(i)].acceptQuant);
        }
        QVERIFY(m_panel->statusText().contains(QStringLiteral("rates.json")));
    }

    void cancelStopsTheJob()
    {
        setInputs(4, 0); // every anchor: long enough to cancel
        m_panel->planRadio()->setChecked(true);
        QSignalSpy finished(m_panel->runner(), &AcceptanceRunner::finished);
        m_panel->runButton()->click();
        QVERIFY(m_panel->runner()->isRunning());
        QVERIFY(m_panel->cancelButton()->isEnabled());
        m_panel->cancelButton()->click();
        QCOMPARE(finished.count(), 1);
        const auto result = finished.front().front().value<AcceptanceJobResult>();
        QVERIFY(!result.run && result.error.isEmpty());
        QVERIFY(m_panel->runButton()->isEnabled());
        QVERIFY(!m_panel->cancelButton()->isEnabled());
        // The cancelled job's result never arrives later.
        QVERIFY(!finished.wait(500));
    }

    void escapeCancelsSensitivityAndEmptiesTheBar()
    {
        // Esc (the window's Cancel) stops the per-unit sensitivity as it stops the analysis, and the bar
        // goes back to empty instead of staying where the job stopped.
        setInputs(4, 0);
        m_panel->planRadio()->setChecked(true);
        auto* cancel = m_window->findChild<QAction*>(QStringLiteral("cancelAction"));
        QVERIFY(cancel);
        QCOMPARE(cancel->shortcut(), QKeySequence(Qt::Key_Escape));
        QVERIFY(!cancel->isEnabled());
        QSignalSpy finished(m_panel->runner(), &AcceptanceRunner::finished);
        m_panel->sensitivityButton()->click();
        QVERIFY(m_panel->runner()->isRunning());
        QVERIFY(cancel->isEnabled());
        m_panel->progressBar()->setFraction(0.92);
        cancel->trigger();
        QCOMPARE(finished.count(), 1);
        QVERIFY(!finished.front().front().value<AcceptanceJobResult>().units);
        QCOMPARE(m_panel->progressBar()->value(), 0);
        QVERIFY(!cancel->isEnabled());
        QVERIFY(m_panel->sensitivityButton()->isEnabled());
    }

    void progressSaysTimeLeft()
    {
        JobProgressBar bar;
        bar.start();
        bar.setFraction(0.25);
        QVERIFY(!bar.text().contains(QStringLiteral("left"))); // no pace yet
        QTest::qWait(1100);
        bar.setFraction(0.5); // half done after a second or more: about as long again
        QVERIFY2(bar.text().contains(QStringLiteral("about 1 s left")) ||
                     bar.text().contains(QStringLiteral("about 2 s left")),
                 qPrintable(bar.text()));
        bar.finish();
        QCOMPARE(bar.value(), bar.maximum());
        QVERIFY(!bar.text().contains(QStringLiteral("left")));
        bar.clear();
        QCOMPARE(bar.value(), 0);
    }

    void dropOnTheTabSetsTheCapture()
    {
        m_panel->captureEdit()->clear();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(m_capture)});
        QDragEnterEvent enter(QPoint(5, 5), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(m_panel, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(5, 5), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(m_panel, &drop);
        QCOMPARE(m_panel->captureEdit()->text(), m_capture);
    }

    void sensitivityBecomesBudgetAlpha()
    {
        setInputs(2, 16);
        m_panel->planRadio()->setChecked(true);
        QAbstractItemModelTester tester(m_panel->sensitivityModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const auto result = clickAndWait(m_panel->sensitivityButton());
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QVERIFY(result.units);
        const auto* units = m_panel->sensitivityModel();
        QVERIFY(units->rowCount() > 0);
        QCOMPARE(units->rowCount(), static_cast<int>(result.units->size()));
        QVERIFY(m_panel->useAlphaButton()->isEnabled());

        m_panel->useAlphaButton()->click();
        BudgetPanel* budget = m_window->budgetPanel();
        QCOMPARE(budget->externalAlphas(), units->alphaRules());
        QCOMPARE(m_window->tabs()->currentWidget(), static_cast<QWidget*>(budget));

        // After a sweep the allocator weighs each ranked unit by the α the table shows.
        QSignalSpy swept(budget->sweepJob(), &SweepJob::finished);
        budget->startSweep();
        QVERIFY(swept.wait(120000));
        QVERIFY(budget->allocator());
        const auto& sweep = budget->allocator()->sweep();
        int matched = 0;
        for (int row = 0; row < units->rowCount(); ++row) {
            const auto& name = units->units()[static_cast<std::size_t>(row)].unit;
            for (std::size_t u = 0; u < sweep.units.size(); ++u) {
                if (sweep.units[u].name == name) {
                    QCOMPARE(budget->allocator()->alphas()[u],
                             units->alphas()[static_cast<std::size_t>(row)]);
                    ++matched;
                }
            }
        }
        QCOMPARE(matched, units->rowCount());
        // Another draft: the handed-over α and the ranking named the old draft's units and go.
        QVERIFY(openAndWait(*m_window, m_draft));
        QVERIFY(budget->externalAlphas().isEmpty());
        QCOMPARE(m_panel->sensitivityModel()->rowCount(), 0);
        QCOMPARE(m_panel->positionModel()->rowCount(), 0);
    }

    // Before any run the plot's note has the plot's width (a hidden legend left in the layout capped the
    // axis rect at 50 px and cut the note to "e a captu").
    void emptyPlotHasItsWidthAt1000x650()
    {
        m_window->resize(1000, 650);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QVERIFY(m_window->showTab(QStringLiteral("acceptance")));
        m_panel->plot()->clear();
        QApplication::processEvents();
        QCustomPlot* plot = m_panel->plot()->plot();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QCPItemText* note = BenchPlot::emptyNote(*plot);
        QVERIFY(note && note->visible());
        QVERIFY2(
            plot->axisRect()->width() >= 240 &&
                QFontMetrics(note->font()).horizontalAdvance(note->text()) <= plot->axisRect()->width(),
            qPrintable(QStringLiteral("'%1' in %2 px").arg(note->text()).arg(plot->axisRect()->width())));
    }

    // At the size of the README's pictures the bars have room and the legend covers neither bars nor axes.
    void plotHasRoomAt1200x700And1000x650()
    {
        m_window->resize(1200, 700);
        m_window->show();
        QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
        QVERIFY(m_window->showTab(QStringLiteral("acceptance")));
        setInputs(4, 32);
        m_panel->planRadio()->setChecked(true);
        const auto result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.run, qPrintable(result.error));
        QApplication::processEvents();
        QCustomPlot* plot = m_panel->plot()->plot();
        plot->replot();
        QVERIFY2(plot->width() >= 400, qPrintable(QString::number(plot->width())));
        QVERIFY(plot->legend->visible());
        QVERIFY(!plot->legend->outerRect().intersects(plot->axisRect()->outerRect()));
        QVERIFY(plot->rect().contains(plot->legend->outerRect()));

        // At 1000x650 the axis' label still fits along the bars (it was cut at both ends).
        m_window->resize(1000, 650);
        QApplication::processEvents();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QFontMetrics metrics(plot->yAxis->labelFont());
        QVERIFY2(
            metrics.horizontalAdvance(plot->yAxis->label()) <= plot->axisRect()->height(),
            qPrintable(
                QStringLiteral("'%1' in %2 px").arg(plot->yAxis->label()).arg(plot->axisRect()->height())));
    }

    // Captures that record neither their layer ids nor their prompt (vLLM's connector files), and one
    // whose ids are one layer off: the Capture reading fields say what the files do not, per draft.
    void captureReadingFields()
    {
        const auto trained = test::dataPath("trained");
        QVERIFY(openAndWait(*m_window, trained / "eagle3"));
        auto* layerIds = m_panel->findChild<QLineEdit*>(QStringLiteral("acceptanceLayerIds"));
        auto* prompt = m_panel->findChild<QSpinBox*>(QStringLiteral("acceptancePromptTokens"));
        QVERIFY(layerIds && prompt);
        QVERIFY(layerIds->text().isEmpty());
        QCOMPARE(prompt->value(), -1); // "as recorded"
        // Without the target nothing can stand in for the prompt length.
        m_panel->captureEdit()->setText(QString::fromStdString((trained / "capture-vllm").string()));
        m_panel->targetEdit()->clear();
        m_panel->kSpin()->setValue(2);
        m_panel->anchorsSpin()->setValue(32);
        m_panel->planRadio()->setChecked(true);
        auto result = clickAndWait(m_panel->runButton());
        QVERIFY(!result.run);
        QVERIFY2(result.error.contains(QStringLiteral("Prompt tokens in the app")), qPrintable(result.error));
        // With the target the run goes on, and says that the prompts count: Prompt tokens fixes it.
        m_panel->targetEdit()->setText(QString::fromStdString((trained / "target").string()));
        const QString promptNote = QStringLiteral("give the prompt length in Prompt tokens");
        result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.run, qPrintable(result.error));
        QVERIFY2(m_panel->statusText().contains(promptNote), qPrintable(m_panel->statusText()));
        QVERIFY(checkCapture().contains(promptNote));
        prompt->setValue(64);
        result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.run, qPrintable(result.error));
        QVERIFY2(!m_panel->statusText().contains(promptNote), qPrintable(m_panel->statusText()));

        // Ids one layer off: the run and Check Capture say the same, naming the field, never a flag.
        prompt->setValue(-1);
        m_panel->captureEdit()->setText(QString::fromStdString((trained / "capture-shifted").string()));
        const QString advice = QStringLiteral("set Layer ids to 0,1,2,3,4,5,6");
        result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.run, qPrintable(result.error));
        QVERIFY2(m_panel->statusText().contains(advice), qPrintable(m_panel->statusText()));
        QVERIFY(!m_panel->statusText().contains(QStringLiteral("--")));
        const QString checked = checkCapture();
        QVERIFY2(checked.contains(advice), qPrintable(checked));
        layerIds->setText(QStringLiteral("0, 1, 2, 3, 4, 5, 6"));
        result = clickAndWait(m_panel->runButton());
        QVERIFY2(result.run, qPrintable(result.error));
        QVERIFY2(!m_panel->statusText().contains(QStringLiteral("Layer ids to")),
                 qPrintable(m_panel->statusText()));
        QVERIFY(!checkCapture().contains(QStringLiteral("Layer ids to")));
        layerIds->setText(QStringLiteral("0, one"));
        result = clickAndWait(m_panel->runButton());
        QVERIFY(!result.run);
        QVERIFY2(m_panel->statusText().contains(QStringLiteral("'one' is not a layer id")),
                 qPrintable(m_panel->statusText()));

        // The fields belong to the draft: the demo draft gets its own (none), eagle3 gets its back.
        QVERIFY(openAndWait(*m_window, m_draft));
        QVERIFY(layerIds->text().isEmpty());
        QVERIFY(openAndWait(*m_window, trained / "eagle3"));
        QCOMPARE(layerIds->text(), QStringLiteral("0, one"));
    }
};

QTEST_MAIN(TestGuiAcceptance)
#include "tst_gui_acceptance.moc"
