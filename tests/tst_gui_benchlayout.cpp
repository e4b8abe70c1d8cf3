// The Benchmarks tab's layout: the results table shows every row in a 1200×700 window,
// the window keeps its size through imports, one key for the plots (legends outside the axis rects in
// exports and the CLI's figure), every plot keeps its room, an arm keeps its colour
// whatever the baseline, an empty plot says why, and a repeat seen twice names both sources.
#include "core/demo/demodraft.h"
#include "guitesthelpers.h"
#include "testsupport.h"
#include "views/bench/benchkey.h"
#include "views/bench/benchmarkstab.h"
#include "views/bench/benchplotqcp.h"
#include "views/bench/benchplotwidget.h"
#include "views/bench/benchtablemodel.h"
#include "views/window/mainwindow.h"

#include <QApplication>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace spark;
using namespace spark::test;
using namespace Qt::StringLiterals;

namespace {

const char* const kCsv = "spec_decode_repeats_long.csv";
const char* const kBf16Json = "bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json";

// Every benchmark sample of tests/data that imports: the CSV, the vLLM results and a /metrics pair.
QStringList allSamples()
{
    return {benchSample(kCsv),
            benchSample(kBf16Json),
            benchSample("w4a16-draft-infqps-concurrency1-Qwen3-32B-20251202-143122.json"),
            benchSample("glm-dspark-bf16-infqps-concurrency1-GLM-5.2-20260301-101500.json"),
            benchSample("glm-dspark-w4a16-infqps-concurrency1-GLM-5.2-20260301-104000.json"),
            benchSample("metrics_before.prom"),
            benchSample("metrics_after.prom")};
}

QCPGraph* graphNamed(QCustomPlot* plot, const QString& name)
{
    for (int i = 0; i < plot->graphCount(); ++i) {
        if (plot->graph(i)->name() == name) {
            return plot->graph(i);
        }
    }
    return nullptr;
}

} // namespace

class TestGuiBenchLayout : public QObject
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

    // At 1200×700 the table shows every row of the samples, and imports never resize the window.
    void tableFitsAndWindowKeepsItsSize()
    {
        MainWindow window(quiet());
        window.resize(1200, 700);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.showTab(u"benchmarks"_s));
        QApplication::processEvents();
        const QSize before = window.size();
        QCOMPARE(before, QSize(1200, 700));
        BenchmarksTab* tab = window.benchmarksTab();

        QVERIFY(importAndWait(*tab, {benchSample(kCsv)}));
        QApplication::processEvents();
        QCOMPARE(window.size(), before);
        QVERIFY(importAndWait(*tab, allSamples().mid(1)));
        QVERIFY2(tab->importError().isEmpty(), qPrintable(tab->importError()));
        QApplication::processEvents();
        QCOMPARE(window.size(), before);

        QTableView* table = tab->tableView();
        const int rows = table->model()->rowCount();
        // The CSV's and Qwen3-32B's runs pool per arm and prompt length (6 rows); the GLM-5.2 runs at k = 2
        // under the same arm names are kept apart (2 rows); the /metrics pair has no arm (1 row).
        QCOMPARE(rows, 9);
        const QRect viewport = table->viewport()->rect();
        for (int row = 0; row < rows; ++row) {
            const QRect cell = table->visualRect(table->model()->index(row, 0));
            QVERIFY2(viewport.contains(cell), qPrintable(u"row %1 of %2 is cut off"_s.arg(row).arg(rows)));
        }
        // The plots get what is left, and still have room to draw.
        QWidget* plot = tab->plot(BenchPlotKind::DecodeSpeed)->plot();
        QVERIFY(plot->isVisible());
        QVERIFY(plot->height() >= plot->minimumHeight());
        QVERIFY(tab->warningsList()->isVisible());

        // A lone /metrics scrape (a long status line) and clearing do not resize it either.
        tab->clear();
        tab->importFiles({benchSample("metrics_before.prom")});
        QApplication::processEvents();
        QCOMPARE(window.size(), before);
    }

    // At 1000x650 the import status is elided rather than cut at its start.
    void statusIsElidedAt1000x650()
    {
        MainWindow window(quiet());
        window.resize(1000, 650);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.showTab(u"benchmarks"_s));
        BenchmarksTab* tab = window.benchmarksTab();
        QVERIFY(importAndWait(*tab, allSamples().mid(0, 3)));
        QApplication::processEvents();
        auto* status = tab->findChild<QLabel*>(u"benchStatus"_s);
        QVERIFY(status);
        QVERIFY(status->toolTip().startsWith(u"Imported "_s));
        QVERIFY2(status->fontMetrics().horizontalAdvance(status->text()) <= status->contentsRect().width(),
                 qPrintable(status->text()));
    }

    // On screen one key stands for the four legends (an arm has one colour in every plot); an exported plot
    // carries its own legend, outside the data.
    void oneKeyForThePlotsAndLegendsInExports()
    {
        BenchmarksTab tab;
        tab.resize(1200, 700);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        const auto& key = tab.plotKey()->entries();
        QVERIFY(tab.plotKey()->isVisible());
        QCustomPlot* decode = tab.plot(BenchPlotKind::DecodeSpeed)->plot();
        for (const char* arm : {"bf16_draft", "w4a16_draft"}) {
            const auto entry = std::find_if(
                key.begin(), key.end(), [&](const BenchKeyEntry& e) { return e.name == QLatin1String(arm); });
            QVERIFY2(entry != key.end(), arm);
            QCOMPARE(entry->color, graphNamed(decode, QLatin1String(arm))->pen().color());
        }
        // Three prompt lengths in three line styles, and the hollow marker of the n.s. Δ at 8192.
        QCOMPARE(std::count_if(key.begin(), key.end(), [](const BenchKeyEntry& e) { return !e.marker; }), 3);
        QVERIFY(std::any_of(key.begin(), key.end(), [](const BenchKeyEntry& e) { return e.hollow; }));
        for (const auto kind : {BenchPlotKind::DecodeSpeed, BenchPlotKind::Delta, BenchPlotKind::Acceptance,
                                BenchPlotKind::PerPosition}) {
            BenchPlotWidget* widget = tab.plot(kind);
            QVERIFY(!widget->plot()->legend->visible());
            const QString svg = m_dir.filePath(BenchPlot::title(kind) + u".svg"_s);
            QString error;
            QVERIFY2(widget->exportTo(svg, &error), qPrintable(error));
            QFile file(svg);
            QVERIFY(file.open(QIODevice::ReadOnly));
            QVERIFY2(file.readAll().contains("w4a16_draft"), qPrintable(BenchPlot::title(kind)));
            QVERIFY(!widget->plot()->legend->visible()); // and back to the key on screen
        }

        // The CLI's figure: one legend per plot, each outside its axis rect.
        QCustomPlot overview;
        overview.resize(1200, 900);
        BenchPlot::populateOverview(overview, *tab.report());
        overview.replot(QCustomPlot::rpImmediateRefresh);
        int legends = 0;
        for (auto* element : overview.plotLayout()->elements(false)) {
            if (auto* legend = qobject_cast<QCPLegend*>(element)) {
                ++legends;
                for (auto* rect : overview.axisRects()) {
                    QVERIFY(!legend->outerRect().intersects(rect->rect()));
                }
            }
        }
        QCOMPARE(legends, 4);
    }

    void armColourFollowsTheArm()
    {
        BenchmarksTab tab;
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        auto colours = [&tab] {
            QCustomPlot* decode = tab.plot(BenchPlotKind::DecodeSpeed)->plot();
            QCPGraph* bf16 = graphNamed(decode, u"bf16_draft"_s);
            QCPGraph* w4 = graphNamed(decode, u"w4a16_draft"_s);
            return std::pair{bf16 ? bf16->pen().color() : QColor(), w4 ? w4->pen().color() : QColor()};
        };
        const auto [bf16, w4] = colours();
        QVERIFY(bf16.isValid() && w4.isValid());
        QVERIFY(bf16 != w4);
        // The Δ plot draws the compared arm in its colour.
        QCustomPlot* delta = tab.plot(BenchPlotKind::Delta)->plot();
        QCPGraph* w4Delta = graphNamed(delta, u"w4a16_draft − bf16_draft"_s);
        QVERIFY(w4Delta);
        QCOMPARE(w4Delta->scatterStyle().pen().color(), w4);

        // Another baseline: the arms are listed in another order, their colours stay.
        tab.setBaselineArm(u"w4a16_draft"_s);
        QCOMPARE(tab.report()->arms.front(), std::string("w4a16_draft"));
        QCOMPARE(colours().first, bf16);
        QCOMPARE(colours().second, w4);
        QCPGraph* bf16Delta = graphNamed(delta, u"bf16_draft − w4a16_draft"_s);
        QVERIFY(bf16Delta);
        QCOMPARE(bf16Delta->scatterStyle().pen().color(), bf16);
        // The acceptance bars and per-position curves use the same colours.
        QCustomPlot* perPosition = tab.plot(BenchPlotKind::PerPosition)->plot();
        QCPGraph* curve = graphNamed(perPosition, u"w4a16_draft @ 512"_s);
        QVERIFY(curve);
        QCOMPARE(curve->pen().color(), w4);
    }

    // A plot with nothing in its legend (nothing imported, or the Δ plot with one arm) still spans the width
    // of its cell: an empty legend left in the layout used to squeeze the axis rect to its minimum.
    void plotWithoutLegendKeepsItsWidth()
    {
        BenchmarksTab tab;
        tab.resize(1200, 700);
        tab.show();
        QVERIFY(QTest::qWaitForWindowExposed(&tab));
        const auto wide = [&tab](BenchPlotKind kind) {
            QCustomPlot* plot = tab.plot(kind)->plot();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            return plot->axisRect()->outerRect().width() == plot->width();
        };
        QVERIFY(wide(BenchPlotKind::DecodeSpeed));
        QVERIFY(wide(BenchPlotKind::Delta));
        QVERIFY(importAndWait(
            tab, {benchSample("bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json")}));
        QCOMPARE(tab.report()->arms.size(), std::size_t{1});
        QVERIFY(wide(BenchPlotKind::Delta));
        QVERIFY(wide(BenchPlotKind::DecodeSpeed));
    }

    // Eight arms and a few warnings: every plot keeps 160 px of height for its data and 240 px of width
    // (the plots scroll below the table when the window is short), light and dark alike.
    void everyPlotKeepsItsRoom_data()
    {
        QTest::addColumn<QSize>("size");
        QTest::addRow("1200x700") << QSize(1200, 700);
        QTest::addRow("1000x650") << QSize(1000, 650);
    }

    void everyPlotKeepsItsRoom()
    {
        QFETCH(QSize, size);
        MainWindow window(quiet());
        window.resize(size);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.showTab(u"benchmarks"_s));
        BenchmarksTab* tab = window.benchmarksTab();
        QVERIFY(importAndWait(*tab, allSamples()));
        QTest::qWait(50); // the layout settles in queued passes
        QApplication::processEvents();
        QCOMPARE(window.size(), size); // the plots scroll; the window does not grow
        for (const auto kind : {BenchPlotKind::DecodeSpeed, BenchPlotKind::Delta, BenchPlotKind::Acceptance,
                                BenchPlotKind::PerPosition}) {
            QCustomPlot* plot = tab->plot(kind)->plot();
            plot->replot(QCustomPlot::rpImmediateRefresh);
            QVERIFY2(plot->axisRect()->height() >= 160 && plot->width() >= 240,
                     qPrintable(u"%1: data %2 px high in a plot of %3x%4"_s.arg(BenchPlot::title(kind))
                                    .arg(plot->axisRect()->height())
                                    .arg(plot->width())
                                    .arg(plot->height())));
            const QFontMetrics metrics(plot->yAxis->labelFont());
            QVERIFY2(metrics.horizontalAdvance(plot->yAxis->label()) <= plot->axisRect()->height(),
                     qPrintable(plot->yAxis->label()));
        }
    }

    void emptyPlotSaysWhy()
    {
        BenchmarksTab tab;
        // Nothing imported yet.
        QVERIFY2(tab.plot(BenchPlotKind::DecodeSpeed)->emptyText().startsWith(u"Import benchmark results"_s),
                 qPrintable(tab.plot(BenchPlotKind::DecodeSpeed)->emptyText()));

        // A /metrics pair has acceptance but no decode speed, and one arm.
        QVERIFY(importAndWait(tab, {benchSample("metrics_before.prom"), benchSample("metrics_after.prom")}));
        const QString decode = tab.plot(BenchPlotKind::DecodeSpeed)->emptyText();
        QVERIFY2(decode.contains(u"No decode speed"_s), qPrintable(decode));
        QCOMPARE(tab.plot(BenchPlotKind::DecodeSpeed)->dataPlottableCount(), 0);
        const QString delta = tab.plot(BenchPlotKind::Delta)->emptyText();
        QVERIFY2(delta.contains(u"Nothing to compare"_s), qPrintable(delta));
        // A plot with data has no note.
        QCOMPARE(tab.plot(BenchPlotKind::Acceptance)->emptyText(), QString());
        QVERIFY(tab.plot(BenchPlotKind::Acceptance)->dataPlottableCount() > 0);
        // The note is drawn: visible and inside the plot.
        QCPItemText* note = BenchPlot::emptyNote(*tab.plot(BenchPlotKind::DecodeSpeed)->plot());
        QVERIFY(note && note->visible());

        // Two arms, the baseline without decode speed: the Δ plot names the baseline.
        const QString csv = m_dir.filePath(u"nodecode.csv"_s);
        test::writeFile(csv.toStdString(), "arm,prompt_len,repeat,decode_tok_s,acceptance_rate\n"
                                           "bf16_draft,512,1,,0.63\n"
                                           "bf16_draft,512,2,,0.62\n"
                                           "w4a16_draft,512,1,49.1,0.60\n"
                                           "w4a16_draft,512,2,49.5,0.61\n");
        tab.clear();
        QVERIFY(importAndWait(tab, {csv}));
        QVERIFY2(tab.importError().isEmpty(), qPrintable(tab.importError()));
        QCOMPARE(tab.report()->baselineArm, std::string("bf16_draft"));
        QCOMPARE(tab.plot(BenchPlotKind::Delta)->emptyText().replace(QLatin1Char('\n'), QLatin1Char(' ')),
                 u"No decode speed in the baseline bf16_draft."_s);
        QCOMPARE(tab.plot(BenchPlotKind::DecodeSpeed)->emptyText(), QString());
        // With data again the note goes.
        tab.clear();
        QVERIFY(importAndWait(tab, {benchSample(kCsv)}));
        QCOMPARE(tab.plot(BenchPlotKind::Delta)->emptyText(), QString());
        QVERIFY(!BenchPlot::emptyNote(*tab.plot(BenchPlotKind::Delta)->plot()));
    }

    void duplicateRepeatNamesBothSources()
    {
        BenchmarksTab tab;
        QVERIFY(importAndWait(tab, {benchSample(kCsv), benchSample(kBf16Json)}));
        QString found;
        for (int i = 0; i < tab.warningsList()->count(); ++i) {
            const QString text = tab.warningsList()->item(i)->text();
            if (text.contains(u"appears more than once"_s)) {
                found = text;
            }
        }
        QVERIFY2(!found.isEmpty(), "a repeat seen twice is reported");
        QVERIFY2(found.contains(QString::fromLatin1(kBf16Json)), qPrintable(found));
        QVERIFY2(found.contains(QString::fromLatin1(kCsv)), qPrintable(found));
    }
};

QTEST_MAIN(TestGuiBenchLayout)
#include "tst_gui_benchlayout.moc"
