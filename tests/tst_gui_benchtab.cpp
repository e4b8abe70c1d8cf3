// The Benchmarks tab: import through the drop path, the statistics table, the baseline switch, warnings and
// the acceptance-collapse banner, plots with data, plot export (PNG/SVG/PDF) and Copy as Markdown.
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/bench/benchmarkstab.h"
#include "views/bench/benchplotqcp.h"
#include "views/bench/benchplotwidget.h"
#include "views/bench/benchtablemodel.h"
#include "views/bench/speedmodelpanel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QListWidget>
#include <QMimeData>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <cmath>

using namespace spark;
using namespace spark::test;

namespace {

const char* const kCsv = "spec_decode_repeats_long.csv";
const char* const kBf16Json = "bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json";
const char* const kW4Json = "w4a16-draft-infqps-concurrency1-Qwen3-32B-20251202-143122.json";
const char* const kGlmBf16Json = "glm-dspark-bf16-infqps-concurrency1-GLM-5.2-20260301-101500.json";
const char* const kGlmW4Json = "glm-dspark-w4a16-infqps-concurrency1-GLM-5.2-20260301-104000.json";

// The row of (arm, prompt length) in the source model, or -1.
int rowOf(const BenchTableModel& model, const std::string& arm, long long promptLen)
{
    const auto* report = model.report();
    for (int row = 0; report && row < model.rowCount(); ++row) {
        const auto& cell = report->cells[static_cast<std::size_t>(row)];
        if (cell.arm == arm && cell.promptLen == promptLen) {
            return row;
        }
    }
    return -1;
}

double number(const BenchTableModel& model, int row, int column)
{
    return model.index(row, column).data(BenchTableModel::SortRole).toDouble();
}

QString text(const BenchTableModel& model, int row, int column)
{
    return model.index(row, column).data().toString();
}

QByteArray head(const QString& path, int bytes)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.read(bytes) : QByteArray();
}

} // namespace

class TestGuiBenchTab : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;

  private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QLocale::setDefault(QLocale::c()); // displayed numbers are locale-aware
        QVERIFY(m_dir.isValid());
    }

    void csvTable()
    {
        BenchmarksTab tab;
        QAbstractItemModelTester tester(tab.tableModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(tab.proxyModel(),
                                             QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(!tab.currentReport());
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        const auto& model = *tab.tableModel();
        QCOMPARE(model.rowCount(), 6);
        QCOMPARE(model.columnCount(), int(BenchTableModel::ColumnCount));
        QVERIFY(tab.currentReport());
        QCOMPARE(tab.currentReport()->baselineArm, std::string("bf16_draft"));

        // bench-formats.md §4.5: decode tok/s at 512, baseline 47.051667 ± 0.461555, candidate +5.3753 %.
        const int base = rowOf(model, "bf16_draft", 512);
        QVERIFY(base >= 0);
        QCOMPARE(text(model, base, BenchTableModel::Arm), QStringLiteral("bf16_draft (baseline)"));
        QCOMPARE(text(model, base, BenchTableModel::PromptLen), QStringLiteral("512"));
        QCOMPARE(text(model, base, BenchTableModel::Count), QStringLiteral("12"));
        QCOMPARE(text(model, base, BenchTableModel::Mean), QStringLiteral("47.05"));
        QCOMPARE(text(model, base, BenchTableModel::Sd), QStringLiteral("0.462"));
        QCOMPARE(text(model, base, BenchTableModel::Median), QStringLiteral("47.00")); // 47.005 in binary
        QCOMPARE(text(model, base, BenchTableModel::DeltaPercent), QStringLiteral("—"));
        QVERIFY(std::abs(number(model, base, BenchTableModel::Mean) - 47.051667) < 1e-6);
        QVERIFY(model.index(base, 0).data(BenchTableModel::BaselineRole).toBool());

        const int w4 = rowOf(model, "w4a16_draft", 512);
        QVERIFY(w4 >= 0);
        QCOMPARE(text(model, w4, BenchTableModel::Mean), QStringLiteral("49.58"));
        QCOMPARE(text(model, w4, BenchTableModel::DeltaPercent), QStringLiteral("+5.38 %"));
        QVERIFY(std::abs(number(model, w4, BenchTableModel::DeltaPercent) - 5.3753) < 1e-4);
        // CI of the difference 1.983368 … 3.074966 tok/s over the baseline mean, in percent.
        QCOMPARE(text(model, w4, BenchTableModel::Ci), QStringLiteral("[+%1, +%2] %")
                                                           .arg(100 * 1.983368 / 47.051667, 0, 'f', 2)
                                                           .arg(100 * 3.074966 / 47.051667, 0, 'f', 2));
        QVERIFY(std::abs(number(model, w4, BenchTableModel::P) - 1.36775e-08) < 1e-12);
        QCOMPARE(text(model, w4, BenchTableModel::Sigma), QStringLiteral("5.68"));
        // 8192: the CI contains zero.
        const int w4long = rowOf(model, "w4a16_draft", 8192);
        QCOMPARE(text(model, w4long, BenchTableModel::Sigma), QStringLiteral("0.18 n.s."));
        // Acceptance figures come from the CSV's acceptance columns.
        QVERIFY(number(model, base, BenchTableModel::AcceptanceRate) > 50);
        QVERIFY(number(model, base, BenchTableModel::AcceptanceLength) > 2.5);
        QVERIFY(text(model, base, BenchTableModel::AcceptanceRate).endsWith(QStringLiteral(" %")));

        // Sorting goes by the numbers, not the text.
        tab.proxyModel()->sort(BenchTableModel::Mean, Qt::DescendingOrder);
        QCOMPARE(tab.proxyModel()->index(0, BenchTableModel::Mean).data().toString(),
                 QStringLiteral("49.58"));

        QVERIFY(tab.collapseBanner()->isHidden());
        QCOMPARE(tab.baselineSelector()->count(), 2);
    }

    void baselineSwitch()
    {
        BenchmarksTab tab;
        QAbstractItemModelTester tester(tab.tableModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        QSignalSpy changed(&tab, &BenchmarksTab::reportChanged);
        tab.setBaselineArm(QStringLiteral("w4a16_draft"));
        QCOMPARE(changed.size(), 1);
        QCOMPARE(tab.currentReport()->baselineArm, std::string("w4a16_draft"));
        const auto& model = *tab.tableModel();
        const int bf16 = rowOf(model, "bf16_draft", 512);
        QVERIFY(number(model, bf16, BenchTableModel::DeltaPercent) < -4.9);
        QCOMPARE(tab.baselineSelector()->currentText(), QStringLiteral("w4a16_draft"));
    }

    void armsOfAnotherSetupHaveTheirOwnBaseline()
    {
        BenchmarksTab tab;
        QVERIFY(importAndWait(tab, {benchSample(kBf16Json), benchSample(kW4Json), benchSample(kGlmBf16Json),
                                    benchSample(kGlmW4Json)}));
        const auto& model = *tab.tableModel();
        // GLM-5.2 at k = 2 is compared with its own bf16 runs, never with the Qwen3-32B baseline: the files'
        // mean_tpot_ms give 20.21 and 21.97 tok/s, +8.71 %.
        const std::string glmBf16 = "bf16_draft [zai-org/GLM-5.2, k=2]";
        const int glm = rowOf(model, "w4a16_draft [zai-org/GLM-5.2, k=2]", 2048);
        QVERIFY(glm >= 0);
        QVERIFY(std::abs(number(model, glm, BenchTableModel::DeltaPercent) - 100 * (21.97 - 20.21) / 20.21) <
                1e-6);
        const int glmBase = rowOf(model, glmBf16, 2048);
        QCOMPARE(text(model, glmBase, BenchTableModel::DeltaPercent), QStringLiteral("—"));
        QVERIFY(model.index(glmBase, 0).data(BenchTableModel::BaselineRole).toBool());
        QVERIFY(model.index(glm, BenchTableModel::Arm)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("Setup: zai-org/GLM-5.2, k=2, compared with ") +
                              QString::fromStdString(glmBf16)));
        // The Qwen pair keeps its Δ against its own baseline.
        const int qwen = rowOf(model, "w4a16_draft", 2048);
        QVERIFY(std::abs(number(model, qwen, BenchTableModel::DeltaPercent) -
                         100 * (46.760373486328376 - 44.744411516028705) / 44.744411516028705) < 1e-6);
    }

    void plotsHaveDataAndExport()
    {
        BenchmarksTab tab;
        tab.resize(1200, 900);
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        for (const auto kind : {BenchPlotKind::DecodeSpeed, BenchPlotKind::Delta, BenchPlotKind::Acceptance,
                                BenchPlotKind::PerPosition}) {
            auto* plot = tab.plot(kind);
            QVERIFY(plot);
            QVERIFY2(plot->dataPlottableCount() > 0, qPrintable(BenchPlot::title(kind)));
        }
        // Decode: one line per arm; per-position: one curve per (arm, prompt length).
        QCOMPARE(tab.plot(BenchPlotKind::DecodeSpeed)->dataPlottableCount(), 2);
        QCOMPARE(tab.plot(BenchPlotKind::PerPosition)->dataPlottableCount(), 6);

        auto* plot = tab.plot(BenchPlotKind::Delta);
        const QString png = m_dir.filePath(QStringLiteral("delta.png"));
        const QString svg = m_dir.filePath(QStringLiteral("delta.svg"));
        const QString pdf = m_dir.filePath(QStringLiteral("delta.pdf"));
        QString error;
        QVERIFY2(plot->exportTo(png, &error), qPrintable(error));
        QVERIFY2(plot->exportTo(svg, &error), qPrintable(error));
        QVERIFY2(plot->exportTo(pdf, &error), qPrintable(error));
        QCOMPARE(head(png, 8), QByteArray("\x89PNG\r\n\x1a\n", 8));
        QVERIFY(head(pdf, 5) == QByteArray("%PDF-"));
        const QByteArray svgText = head(svg, 1 << 20);
        QVERIFY(svgText.contains("<svg"));
        QVERIFY(svgText.contains("</svg>"));
        // The SVG is vector output: the axis label is text, not pixels.
        QVERIFY(svgText.contains("prompt length"));
        QVERIFY(!plot->exportTo(m_dir.filePath(QStringLiteral("delta.gif")), &error));
        QVERIFY(error.contains(QStringLiteral("delta.gif")));
    }

    void armColoursStayAsArmsAreAdded()
    {
        // An arm's colour belongs to its name: importing more arms, even ones that sort before it, or
        // choosing another baseline, never recolours it.
        const std::vector<std::string> first{"zz-w4a16", "zz-bf16"};
        const QColor w4a16 = BenchPlot::armColor(first, "zz-w4a16");
        const QColor bf16 = BenchPlot::armColor(first, "zz-bf16");
        QVERIFY(w4a16 != bf16);
        const std::vector<std::string> more{"aa-fp8", "zz-bf16", "zz-w4a16", "zz-nvfp4"};
        QCOMPARE(BenchPlot::armColor(more, "zz-w4a16"), w4a16);
        QCOMPARE(BenchPlot::armColor(more, "zz-bf16"), bf16);
        QVERIFY(BenchPlot::armColor(more, "aa-fp8") != w4a16 && BenchPlot::armColor(more, "aa-fp8") != bf16);
    }

    void paletteChangeRecolours()
    {
        BenchmarksTab tab;
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        auto* plot = tab.plot(BenchPlotKind::DecodeSpeed)->plot();
        QPalette dark = tab.palette();
        dark.setColor(QPalette::Window, QColor(30, 30, 30));
        dark.setColor(QPalette::Base, QColor(20, 20, 20));
        dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
        dark.setColor(QPalette::Text, QColor(230, 230, 230));
        QVERIFY(plot->xAxis->tickLabelColor() != QColor(230, 230, 230));
        tab.setPalette(dark);
        QCOMPARE(plot->xAxis->tickLabelColor(), QColor(230, 230, 230));
        QCOMPARE(plot->yAxis->labelColor(), QColor(230, 230, 230));
        QCOMPARE(plot->axisRect()->backgroundBrush().color(), QColor(20, 20, 20));
        QCOMPARE(plot->legend->textColor(), QColor(230, 230, 230));
        // The data survive the recolouring.
        QCOMPARE(tab.plot(BenchPlotKind::DecodeSpeed)->dataPlottableCount(), 2);
    }

    void copyMarkdown()
    {
        BenchmarksTab tab;
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        QApplication::clipboard()->clear();
        tab.copyMarkdown();
        const QString markdown = QApplication::clipboard()->text();
        QVERIFY(!markdown.isEmpty());
        QCOMPARE(markdown, tab.markdown());
        QVERIFY(markdown.contains(QStringLiteral("| bf16_draft")));
        QVERIFY(markdown.contains(QStringLiteral("w4a16_draft")));
        QVERIFY(markdown.contains(QStringLiteral("|---")) || markdown.contains(QStringLiteral("| ---")) ||
                markdown.contains(QStringLiteral("|--")));
    }

    void dropJsonAndScrapes()
    {
        BenchmarksTab tab;
        QAbstractItemModelTester tester(tab.tableModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(benchSample(kBf16Json)), QUrl::fromLocalFile(benchSample(kW4Json)),
                      QUrl::fromLocalFile(benchSample("metrics_before.prom")),
                      QUrl::fromLocalFile(benchSample("metrics_after.prom"))});
        const QPoint at(10, 10);
        QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&tab, &enter);
        QVERIFY(enter.isAccepted());
        QSignalSpy changed(&tab, &BenchmarksTab::reportChanged);
        QDropEvent drop(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&tab, &drop);
        QVERIFY(drop.isAccepted());
        QVERIFY(changed.wait(30000));
        QVERIFY2(tab.importError().isEmpty(), qPrintable(tab.importError()));
        QCOMPARE(tab.importedFiles().size(), 4);
        const auto report = tab.currentReport();
        QVERIFY(report);
        // The vLLM results take their arms from their metadata; the scrape pair carries no arm.
        auto arms = report->arms;
        std::sort(arms.begin(), arms.end());
        std::string joined;
        for (const auto& arm : arms) {
            joined += "'" + arm + "' ";
        }
        QVERIFY2(arms == (std::vector<std::string>{"(no arm)", "bf16_draft", "w4a16_draft"}), joined.c_str());
        QCOMPARE(report->baselineArm, std::string("bf16_draft"));
        QCOMPARE(tab.tableModel()->rowCount(), 3);
        const int noArm = rowOf(*tab.tableModel(), "(no arm)", 0);
        QVERIFY(noArm >= 0);
        QCOMPARE(text(*tab.tableModel(), noArm, BenchTableModel::Arm), QStringLiteral("(no arm)"));
        QCOMPARE(text(*tab.tableModel(), noArm, BenchTableModel::AcceptanceRate), QStringLiteral("62.26 %"));
        QVERIFY(tab.plot(BenchPlotKind::PerPosition)->dataPlottableCount() > 0);

        // A folder is not a benchmark file: the drag is refused.
        QMimeData folder;
        folder.setUrls({QUrl::fromLocalFile(m_dir.path())});
        QDragEnterEvent refused(at, Qt::CopyAction, &folder, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&tab, &refused);
        QVERIFY(!refused.isAccepted());

        // Dropping the same files again does not count their repeats twice.
        const int rows = tab.tableModel()->rowCount();
        tab.importFiles({benchSample(kBf16Json)});
        QCOMPARE(tab.importedFiles().size(), 4);
        QCOMPARE(tab.tableModel()->rowCount(), rows);
    }

    void importTagsNameTheArm()
    {
        // A /metrics pair states no arm: the tag fields give it one, as --arm does on the CLI.
        BenchmarksTab tab;
        RecordTags tags;
        tags.arm = "w4a16_draft";
        tags.promptLen = 1024;
        tab.setImportTags(tags);
        QCOMPARE(tab.importTags().arm.value_or(""), std::string("w4a16_draft"));
        QVERIFY(importAndWait(tab, {benchSample("metrics_before.prom"), benchSample("metrics_after.prom")}));
        QVERIFY2(tab.importError().isEmpty(), qPrintable(tab.importError()));
        auto report = tab.currentReport();
        QVERIFY(report);
        QCOMPARE(report->arms, std::vector<std::string>{"w4a16_draft"});
        QCOMPARE(report->cells.front().promptLen, 1024LL);
        for (int i = 0; i < tab.warningsList()->count(); ++i) {
            QVERIFY2(!tab.warningsList()->item(i)->text().contains(QStringLiteral("carries no arm")),
                     qPrintable(tab.warningsList()->item(i)->text()));
        }

        // Override replaces what a file states; without it, a file's own arm wins.
        tab.clear();
        tags.override = false;
        tags.promptLen.reset();
        tab.setImportTags(tags);
        QVERIFY(importAndWait(tab, {benchSample(kBf16Json)}));
        QCOMPARE(tab.currentReport()->arms, std::vector<std::string>{"bf16_draft"});
        tab.clear();
        tags.override = true;
        tab.setImportTags(tags);
        QVERIFY(tab.importTags().override);
        QVERIFY(importAndWait(tab, {benchSample(kBf16Json)}));
        QCOMPARE(tab.currentReport()->arms, std::vector<std::string>{"w4a16_draft"});
    }

    void scrapesOneAtATime()
    {
        // Dropping "before" then "after" separately pairs them in that order.
        BenchmarksTab tab;
        QSignalSpy changed(&tab, &BenchmarksTab::reportChanged);
        tab.importFiles({benchSample("metrics_before.prom")});
        QCOMPARE(tab.pendingScrape(), benchSample("metrics_before.prom"));
        QVERIFY(!tab.isImporting());
        QTest::qWait(50); // no import was started, so nothing arrives
        QVERIFY(changed.isEmpty());
        QVERIFY(!tab.currentReport());
        QVERIFY(importAndWait(tab, {benchSample("metrics_after.prom")}));
        QVERIFY2(tab.importError().isEmpty(), qPrintable(tab.importError()));
        QVERIFY(tab.pendingScrape().isEmpty());
        QVERIFY(tab.currentReport());
        QCOMPARE(tab.importedFiles().size(), 2);
        QVERIFY(tab.currentReport()->cells.front().metric(benchmetric::kAcceptanceRate));
    }

    void collapseBanner()
    {
        // A W4A16 draft served behind the wrong target precision: ~0% acceptance and no error anywhere.
        const QString csv = m_dir.filePath(QStringLiteral("collapse.csv"));
        test::writeFile(csv.toStdString(), "arm,prompt_len,repeat,decode_tok_s,acceptance_rate\n"
                                           "bf16_draft,512,1,47.1,0.63\n"
                                           "bf16_draft,512,2,46.9,0.62\n"
                                           "w4a16_fp8_target,512,1,30.2,0.004\n"
                                           "w4a16_fp8_target,512,2,30.5,0.006\n");
        BenchmarksTab tab;
        tab.show();
        QVERIFY(importAndWait(tab, {csv}));
        QVERIFY(tab.collapseBanner()->isVisible());
        QVERIFY(tab.collapseBanner()->text().contains(QStringLiteral("w4a16_fp8_target")));
        bool listed = false;
        for (int i = 0; i < tab.warningsList()->count(); ++i) {
            listed |= tab.warningsList()->item(i)->data(Qt::UserRole).toString() ==
                      QLatin1String("AcceptanceCollapse");
        }
        QVERIFY(listed);
        tab.clear();
        QVERIFY(!tab.currentReport());
        QVERIFY(tab.collapseBanner()->isHidden());
        QCOMPARE(tab.tableModel()->rowCount(), 0);
    }

    void rendersInLightAndDark()
    {
        // The whole tab renders with data in both palettes (SPARK_TEST_SNAPSHOTS=DIR keeps the images).
        BenchmarksTab tab;
        tab.resize(1400, 1000);
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        QPalette dark = tab.palette();
        dark.setColor(QPalette::Window, QColor(37, 37, 38));
        dark.setColor(QPalette::Base, QColor(30, 30, 30));
        dark.setColor(QPalette::AlternateBase, QColor(45, 45, 48));
        dark.setColor(QPalette::WindowText, QColor(220, 220, 220));
        dark.setColor(QPalette::Text, QColor(220, 220, 220));
        dark.setColor(QPalette::ButtonText, QColor(220, 220, 220));
        dark.setColor(QPalette::Button, QColor(50, 50, 52));
        dark.setColor(QPalette::Mid, QColor(90, 90, 90));
        const QString keep = qEnvironmentVariable("SPARK_TEST_SNAPSHOTS");
        for (const bool isDark : {false, true}) {
            if (isDark) {
                tab.setPalette(dark);
            }
            QApplication::processEvents(); // the queued replots
            const QImage image = tab.grab().toImage();
            QVERIFY(!image.isNull());
            // The decode plot's background is the palette's Base colour.
            auto* plot = tab.plot(BenchPlotKind::DecodeSpeed)->plot();
            const QPoint inPlot = plot->mapTo(&tab, plot->axisRect()->rect().topLeft() + QPoint(3, 3));
            const QColor expected = tab.palette().color(QPalette::Base);
            QCOMPARE(image.pixelColor(inPlot * image.devicePixelRatio()).rgb(), expected.rgb());
            if (!keep.isEmpty()) {
                image.save(QDir(keep).filePath(isDark ? QStringLiteral("benchmarks-dark.png")
                                                      : QStringLiteral("benchmarks-light.png")));
            }
        }
    }

    void importErrorNamesFileAndLine()
    {
        const QString bad = m_dir.filePath(QStringLiteral("bad.csv"));
        test::writeFile(bad.toStdString(), "arm,prompt_len,repeat,decode_tok_s\n"
                                           "bf16_draft,512,1,47.1\n"
                                           "bf16_draft,512,2,not-a-number\n");
        BenchmarksTab tab;
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        QSignalSpy failed(&tab, &BenchmarksTab::importFailed);
        tab.importFiles({bad});
        QVERIFY(failed.wait(30000));
        const QString message = failed.front().front().toString();
        QVERIFY2(message.contains(QStringLiteral("bad.csv:3")), qPrintable(message));
        QVERIFY(tab.importError().contains(QStringLiteral("bad.csv")));
        // What was imported before stays.
        QCOMPARE(tab.tableModel()->rowCount(), 6);
    }

    // At the size of the README's pictures, with the warnings of the sample imports shown, the speed model's
    // plot keeps at least eight lines of height: it is not squashed under the tables and the assumptions.
    // The speed model's plot keeps 160 px of height and 240 px of width for its data, its x label whole.
    void speedModelPlotHasRoom_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addRow("1200x700") << QSize(1200, 700);
        QTest::addRow("1000x650") << QSize(1000, 650);
    }

    void speedModelPlotHasRoom()
    {
        QFETCH(QSize, size);
        MainWindow window(quiet());
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.showTab(QStringLiteral("benchmarks")));
        BenchmarksTab* tab = window.findChild<BenchmarksTab*>();
        QVERIFY(tab);
        QSignalSpy changed(tab, &BenchmarksTab::reportChanged);
        tab->importFiles({benchSample(kCsv), benchSample(kBf16Json), benchSample(kW4Json)});
        QTRY_VERIFY_WITH_TIMEOUT(tab->report() && !tab->report()->cells.empty(), 20000);
        tab->viewTabs()->setCurrentIndex(1);
        QVERIFY(tab->speedModelPanel()->isVisible());
        tab->speedModelPanel()->drafterMsInput()->setValue(3.2);
        QTest::qWait(50); // the layout settles in queued passes
        QCOMPARE(window.size(), size);
        QCustomPlot* plot = tab->speedModelPanel()->plot();
        QVERIFY(plot->isVisible());
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QRect data = plot->axisRect()->rect();
        QVERIFY2(data.height() >= 160 && data.width() >= 240,
                 qPrintable(QStringLiteral("data %1x%2 in a plot of %3x%4")
                                .arg(data.width())
                                .arg(data.height())
                                .arg(plot->width())
                                .arg(plot->height())));
        const QFontMetrics metrics(plot->xAxis->labelFont());
        QVERIFY2(metrics.horizontalAdvance(plot->xAxis->label()) <= data.width(),
                 qPrintable(plot->xAxis->label()));
    }

    // The same arm measured at k = 2 and k = 3 is two arms in the table, not one cell of mixed repeats.
    void mixedKIsNotPooled()
    {
        const QString source = QString::fromStdString(
            test::dataPath("bench/glm-dspark-bf16-infqps-concurrency1-GLM-5.2-20260301-101500.json")
                .string());
        QByteArray text = head(source, 1 << 20);
        const QString k3 = m_dir.filePath(QStringLiteral("bf16-k3.json"));
        QFile out(k3);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text.replace("\"num_speculative_tokens\": \"2\"", "\"num_speculative_tokens\": \"3\""));
        out.close();
        BenchmarksTab tab;
        QSignalSpy changed(&tab, &BenchmarksTab::reportChanged);
        tab.importFiles({source, k3});
        QTRY_VERIFY_WITH_TIMEOUT(tab.report() && !tab.report()->cells.empty(), 20000);
        QStringList arms;
        for (const auto& cell : tab.report()->cells) {
            arms.append(QString::fromStdString(cell.arm));
        }
        arms.removeDuplicates();
        arms.sort();
        QCOMPARE(arms, (QStringList{QStringLiteral("bf16_draft"), QStringLiteral("bf16_draft [k=3]")}));
    }

    void modelConfigIsNotARecord()
    {
        // A draft's config.json among the results was a record of no arm, which added an empty arm to every
        // table and plot and shifted the arms' colours.
        BenchmarksTab tab;
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        const int rows = tab.tableModel()->rowCount();
        QSignalSpy failed(&tab, &BenchmarksTab::importFailed);
        const auto config = test::dataPath("trained") / "eagle3" / "config.json";
        tab.importFiles({QString::fromStdString(config.string())});
        QVERIFY(failed.wait(30000));
        const QString message = failed.front().front().toString();
        QVERIFY2(message.contains(QStringLiteral("config.json:1")) &&
                     message.contains(QStringLiteral("not a vllm bench serve result")),
                 qPrintable(message));
        QCOMPARE(tab.tableModel()->rowCount(), rows);
    }
};

QTEST_MAIN(TestGuiBenchTab)
#include "tst_gui_benchtab.moc"
