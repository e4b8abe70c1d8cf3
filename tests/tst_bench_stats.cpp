// Statistics of bench-formats.md §4: Student-t/normal reference values (§4.2), the worked Welch examples
// (§4.3) and the expected per-cell results for the synthetic CSV (§4.5).
#include "core/bench/benchcsv.h"
#include "core/bench/benchreport.h"
#include "core/util/statistics.h"
#include "core/util/textformat.h"
#include "testsupport.h"

#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

using namespace spark;

namespace {

/// |actual − expected| ≤ rel·|expected| (absolute when expected is 0), with a readable failure.
bool closeRel(double actual, double expected, double rel, std::string* why)
{
    const double tol = expected == 0 ? rel : rel * std::abs(expected);
    if (std::abs(actual - expected) <= tol) {
        return true;
    }
    char buffer[200];
    std::snprintf(buffer, sizeof buffer, "actual %.17g, expected %.17g (rel tol %g)", actual, expected, rel);
    *why = buffer;
    return false;
}

/// The doc's tables print rounded numbers: accept anything that rounds to the printed text
/// (half a unit in the last printed digit, plus a hair for the binary representation).
bool matchesPrinted(double actual, const QString& printed, std::string* why)
{
    const std::string text = printed.toStdString();
    const double expected = std::strtod(text.c_str(), nullptr);
    const auto ePos = text.find_first_of("eE");
    const std::string mantissa = text.substr(0, ePos);
    const int exponent = ePos == std::string::npos ? 0 : std::atoi(text.c_str() + ePos + 1);
    const auto dot = mantissa.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
    const double tol = 0.5 * std::pow(10.0, exponent - decimals) * (1 + 1e-9) + 1e-15 * std::abs(expected);
    if (std::abs(actual - expected) <= tol) {
        return true;
    }
    char buffer[200];
    std::snprintf(buffer, sizeof buffer, "actual %.12g does not round to %s", actual, text.c_str());
    *why = buffer;
    return false;
}

#define CHECK_REL(actual, expected, rel)                                                                     \
    do {                                                                                                     \
        std::string why_;                                                                                    \
        QVERIFY2(closeRel((actual), (expected), (rel), &why_), (std::string(#actual ": ") + why_).c_str());  \
    } while (false)

#define CHECK_PRINTED(actual, printed)                                                                       \
    do {                                                                                                     \
        std::string why_;                                                                                    \
        QVERIFY2(matchesPrinted((actual), (printed), &why_), (std::string(#actual ": ") + why_).c_str());    \
    } while (false)

std::vector<double> vec(const QList<double>& list)
{
    return {list.begin(), list.end()};
}

constexpr double kTight = 1e-9;

} // namespace

class TestBenchStats : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void numberText();
    void tQuantileTable_data();
    void tQuantileTable();
    void tClosedFormsAndCdf();
    void normalQuantile();
    void summary();
    void welchExamples_data();
    void welchExamples();
    void publishedSummaryExample();
    void largeTPrecision();
    void degenerateCases();
    void duplicateRepeatNamesBothSources();
    void mixedSetupsAreNotPooled();
    void armsAreComparedWithinTheirSetup();
    void csvExpectedDecode_data();
    void csvExpectedDecode();
    void csvExpectedAcceptance_data();
    void csvExpectedAcceptance();
};

void TestBenchStats::tQuantileTable_data()
{
    QTest::addColumn<double>("p");
    QTest::addColumn<double>("df");
    QTest::addColumn<QString>("expected");
    // bench-formats §4.2 table of t_{0.975,ν}, printed with 10 decimals.
    const std::vector<std::pair<double, const char*>> table{
        {1, "12.7062047362"}, {2, "4.3026527297"},  {3, "3.1824463053"},  {4, "2.7764451052"},
        {5, "2.5705818356"},  {6, "2.4469118511"},  {7, "2.3646242516"},  {8, "2.3060041352"},
        {9, "2.2621571628"},  {10, "2.2281388520"}, {11, "2.2009851601"}, {12, "2.1788128297"},
        {13, "2.1603686565"}, {14, "2.1447866879"}, {15, "2.1314495456"}, {16, "2.1199052992"},
        {17, "2.1098155778"}, {18, "2.1009220402"}, {19, "2.0930240544"}, {20, "2.0859634473"},
        {21, "2.0796138447"}, {22, "2.0738730679"}, {23, "2.0686576104"}, {24, "2.0638985616"},
        {25, "2.0595385528"}, {26, "2.0555294386"}, {27, "2.0518305165"}, {28, "2.0484071418"},
        {29, "2.0452296421"}, {30, "2.0422724563"}, {40, "2.0210753903"}, {60, "2.0002978220"},
        {120, "1.9799304051"}};
    for (const auto& [df, t] : table) {
        QTest::addRow("t975_nu%g", df) << 0.975 << df << QString::fromLatin1(t);
    }
    // Non-integer ν, full precision.
    QTest::addRow("nu1.5") << 0.975 << 1.5 << QStringLiteral("6.016663104427922");
    QTest::addRow("nu2.5") << 0.975 << 2.5 << QStringLiteral("3.5746548420036763");
    QTest::addRow("nu7.3") << 0.975 << 7.3 << QStringLiteral("2.345066736547701");
    QTest::addRow("nu21.77") << 0.975 << 21.77 << QStringLiteral("2.0751441575870553");
    QTest::addRow("nu24.9") << 0.975 << 24.9 << QStringLiteral("2.0599580324598312");
    QTest::addRow("t95_11") << 0.95 << 11.0 << QStringLiteral("1.7958848187");
    QTest::addRow("t995_11") << 0.995 << 11.0 << QStringLiteral("3.1058065155");
    QTest::addRow("t95_22") << 0.95 << 22.0 << QStringLiteral("1.7171443744");
    QTest::addRow("t995_22") << 0.995 << 22.0 << QStringLiteral("2.8187560606");
}

void TestBenchStats::tQuantileTable()
{
    QFETCH(double, p);
    QFETCH(double, df);
    QFETCH(QString, expected);
    const double t = studentTQuantile(p, df);
    if (expected.size() > 14) {
        CHECK_REL(t, expected.toDouble(), kTight);
    } else {
        CHECK_PRINTED(t, expected);
    }
}

void TestBenchStats::tClosedFormsAndCdf()
{
    CHECK_REL(studentTQuantile(0.975, 1), 12.706204736174696, kTight);
    CHECK_REL(studentTQuantile(0.975, 2), 4.302652729749462, kTight);
    CHECK_REL(studentTQuantile(0.975, 4), 2.7764451051977934, kTight);
    CHECK_REL(studentTCdf(2.0, 5), 0.9490302605850708, kTight);
    CHECK_REL(studentTCdf(1.0, 1), 0.75, kTight);
    CHECK_REL(studentTCdf(-1.5, 3.5), 0.10890909350767265, kTight);
    CHECK_REL(studentTCdf(3.0, 30), 0.9973050179671741, kTight);
    // Symmetry: the lower quantile is the negated upper one.
    CHECK_REL(studentTQuantile(0.025, 7.3), -2.345066736547701, kTight);
}

void TestBenchStats::normalQuantile()
{
    CHECK_REL(spark::normalQuantile(0.975), 1.9599639845400536, kTight);
    CHECK_PRINTED(spark::normalQuantile(0.995), QStringLiteral("2.5758293035489"));
    CHECK_REL(-spark::normalQuantile(0.5e-10), 6.466951087240515, kTight);
    QVERIFY(std::isinf(spark::normalQuantile(0.0)));
    QCOMPARE(sigmaFromTwoSidedP(1.0), 0.0);
}

void TestBenchStats::summary()
{
    // Example 2 arm A: odd n.
    const std::vector<double> a{44.1, 43.8, 44.5, 43.9, 44.3};
    const auto s = summarize(a);
    QCOMPARE(s.n, std::size_t(5));
    CHECK_REL(s.mean, 44.12, kTight);
    CHECK_REL(s.sd, 0.2863564212655276, kTight);
    CHECK_REL(s.median, 44.1, kTight);
    CHECK_REL(s.cv, 0.2863564212655276 / 44.12, kTight);
    QCOMPARE(s.min, 43.8);
    QCOMPARE(s.max, 44.5);
    // Even n: the mean of the two middle values.
    const std::vector<double> even{4, 1, 3, 2};
    QCOMPARE(summarize(even).median, 2.5);
    // n = 1: no variance.
    const std::vector<double> one{3.0};
    QVERIFY(std::isnan(summarize(one).sd));
    QVERIFY(std::isnan(summarize(one).cv));
    QCOMPARE(summarize(std::vector<double>{}).n, std::size_t(0));
}

void TestBenchStats::welchExamples_data()
{
    QTest::addColumn<QList<double>>("a");
    QTest::addColumn<QList<double>>("b");
    // meanA, meanB, sdA, sdB, medianA, medianB, d, SE, ν, t, t*, ciLow, ciHigh, p, σ, Δ% (NaN = not listed)
    QTest::addColumn<QList<double>>("expected");
    const double nan = std::nan("");
    QTest::addRow("example2_n5") << QList<double>{44.1, 43.8, 44.5, 43.9, 44.3}
                                 << QList<double>{46.0, 45.6, 46.3, 45.9, 46.1}
                                 << QList<double>{44.12,
                                                  45.98,
                                                  0.2863564212655276,
                                                  0.2588435821108946,
                                                  44.1,
                                                  46.0,
                                                  1.86,
                                                  0.17262676501632054,
                                                  7.91973602069026,
                                                  10.774690702361003,
                                                  2.310078444390684,
                                                  1.4612186312109086,
                                                  2.2587813687891045,
                                                  5.238499933580655e-06,
                                                  4.555002323340133,
                                                  4.21577515865822};
    QTest::addRow("example3_unequal")
        << QList<double>{44.2, 43.1, 45.0, 44.6, 43.8, 44.9, 43.5, 44.0, 45.3, 44.4, 43.9, 44.7}
        << QList<double>{46.9, 44.8, 47.5, 45.2, 46.6, 45.9}
        << QList<double>{44.28333333333333,
                         46.15,
                         0.6534291828267976,
                         1.0368220676663862,
                         44.3,
                         46.25,
                         1.866666666666667,
                         0.4634085397869517,
                         7.0565968216624695,
                         4.028123149229947,
                         2.3607850780035067,
                         0.7726587009182373,
                         2.960674632415097,
                         0.004924730848177541,
                         2.811916352720063,
                         4.2152803914188945};
    QTest::addRow("example4_tiny") << QList<double>{44.0, 45.0} << QList<double>{45.5, 46.5, 47.0}
                                   << QList<double>{44.5,
                                                    46.333333333333336,
                                                    0.7071067811865476,
                                                    0.7637626158259734,
                                                    nan,
                                                    nan,
                                                    1.8333333333333357,
                                                    0.6666666666666666,
                                                    2.4265402843601893,
                                                    2.75,
                                                    3.6532818875453597,
                                                    -0.6021879250302371,
                                                    4.2688545916969085,
                                                    0.08957798226119626,
                                                    1.6976280658445708,
                                                    nan};
    QTest::addRow("example5_classic") << QList<double>{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                                                       24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4}
                                      << QList<double>{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                                                       21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4}
                                      << QList<double>{nan,
                                                       nan,
                                                       nan,
                                                       nan,
                                                       nan,
                                                       nan,
                                                       -2.166666666666668,
                                                       0.8824245100137552,
                                                       24.98852929023142,
                                                       -2.455356398286006,
                                                       nan,
                                                       -3.9840962671409264,
                                                       -0.34923706619240935,
                                                       0.02137800146286684,
                                                       2.30124119710681,
                                                       nan};
    QTest::addRow("example6_equal_means")
        << QList<double>{1, 2, 3} << QList<double>{2, 2, 2, 1, 3} << QList<double>{nan,
                                                                                   nan,
                                                                                   nan,
                                                                                   nan,
                                                                                   nan,
                                                                                   nan,
                                                                                   0.0,
                                                                                   nan,
                                                                                   3.2344497607655507,
                                                                                   0.0,
                                                                                   nan,
                                                                                   -2.0116023895294712,
                                                                                   2.0116023895294712,
                                                                                   1.0,
                                                                                   0.0,
                                                                                   nan};
}

void TestBenchStats::welchExamples()
{
    QFETCH(QList<double>, a);
    QFETCH(QList<double>, b);
    QFETCH(QList<double>, expected);
    const auto sa = summarize(vec(a));
    const auto sb = summarize(vec(b));
    const auto w = welchTest(sa, sb);
    QVERIFY(w.valid);
    const double actual[] = {sa.mean,  sb.mean, sa.sd,   sb.sd,         sa.median,   sb.median,
                             w.diff,   w.se,    w.df,    w.t,           w.tCritical, w.ciLow,
                             w.ciHigh, w.p,     w.sigma, w.deltaPercent};
    const char* names[] = {"meanA", "meanB", "sdA", "sdB",   "medianA", "medianB", "d",     "SE",
                           "nu",    "t",     "t*",  "ciLow", "ciHigh",  "p",       "sigma", "delta%"};
    for (int i = 0; i < expected.size(); ++i) {
        if (std::isnan(expected[i])) {
            continue;
        }
        std::string why;
        // 1e-9 relative everywhere (stricter than the doc's 1e-7 for t*, CI, p and σ).
        QVERIFY2(closeRel(actual[i], expected[i], kTight, &why),
                 (std::string(names[i]) + ": " + why).c_str());
    }
}

void TestBenchStats::publishedSummaryExample()
{
    // Example 1: Navarro, Learning Statistics with R, section 13.4 (summary statistics only).
    const auto a = summaryFromMoments(18, 69.056, 5.775);
    const auto b = summaryFromMoments(15, 74.533, 8.999);
    const auto w = welchTest(a, b);
    CHECK_PRINTED(w.t, QStringLiteral("2.03388055607"));
    CHECK_PRINTED(w.df, QStringLiteral("23.0249259135"));
    CHECK_PRINTED(w.p, QStringLiteral("0.0536430957"));
    CHECK_PRINTED(w.ciLow, QStringLiteral("-0.0933168218"));
    CHECK_PRINTED(w.ciHigh, QStringLiteral("11.0473168218"));
    // The published R output, to its 3 decimals.
    CHECK_PRINTED(w.t, QStringLiteral("2.034"));
    CHECK_PRINTED(w.df, QStringLiteral("23.025"));
    CHECK_PRINTED(w.p, QStringLiteral("0.054"));
    QVERIFY(!w.significant());
}

void TestBenchStats::largeTPrecision()
{
    const double p = twoSidedPValue(30.0, 22.0);
    CHECK_REL(p, 2.4277697515873035e-19, kTight);
    CHECK_REL(sigmaFromTwoSidedP(p), 8.99199762097534, kTight);
    // Example 2's Δ% CI, which treats the baseline mean as exact.
    const auto w = welchTest(summarize(std::vector<double>{44.1, 43.8, 44.5, 43.9, 44.3}),
                             summarize(std::vector<double>{46.0, 45.6, 46.3, 45.9, 46.1}));
    CHECK_PRINTED(w.deltaPercentCiLow, QStringLiteral("3.3119189284"));
    CHECK_PRINTED(w.deltaPercentCiHigh, QStringLiteral("5.1196313889"));
    QVERIFY(w.significant());
}

void TestBenchStats::degenerateCases()
{
    // n < 2 in one arm: "n/a".
    auto w = welchTest(summarize(std::vector<double>{1.0}), summarize(std::vector<double>{2.0, 3.0}));
    QVERIFY(!w.valid);
    QVERIFY(std::isnan(w.p));
    QCOMPARE(w.diff, 1.5);
    // SE = 0 with d ≠ 0: t = ∞, p = 0; with d = 0: t = 0, p = 1.
    w = welchTest(summarize(std::vector<double>{2.0, 2.0}), summarize(std::vector<double>{3.0, 3.0, 3.0}));
    QVERIFY(w.valid);
    QVERIFY(std::isinf(w.t) && w.t > 0);
    QCOMPARE(w.p, 0.0);
    QVERIFY(std::isinf(w.sigma));
    w = welchTest(summarize(std::vector<double>{2.0, 2.0}), summarize(std::vector<double>{2.0, 2.0}));
    QCOMPARE(w.t, 0.0);
    QCOMPARE(w.p, 1.0);
    QCOMPARE(w.sigma, 0.0);
    // One constant arm: ν = n_other − 1.
    w = welchTest(summarize(std::vector<double>{5.0, 5.0, 5.0}),
                  summarize(std::vector<double>{1.0, 2.0, 4.0, 7.0}));
    CHECK_REL(w.df, 3.0, kTight);
}

// A repeat number seen twice in one cell: the warning names the record that repeats it and the first one.
void TestBenchStats::duplicateRepeatNamesBothSources()
{
    std::vector<BenchRecord> records(2);
    for (auto& r : records) {
        r.arm = "w4a16_draft";
        r.promptLen = 1024;
        r.repeat = 1;
        r.metrics["output_throughput"] = 100.0;
    }
    records[0].sourceFile = "/runs/first.json";
    records[1].sourceFile = "/runs/second.csv";
    records[1].sourceLine = 7;
    const auto report = buildBenchReport(records, {}, {});
    const auto it = std::find_if(report.warnings.begin(), report.warnings.end(), [](const BenchWarning& w) {
        return w.message.find("appears more than once") != std::string::npos;
    });
    QVERIFY(it != report.warnings.end());
    QCOMPARE(
        QString::fromStdString(it->text()),
        QStringLiteral("/runs/second.csv:7: warning: repeat 1 of arm 'w4a16_draft' at prompt length 1024 "
                       "appears more than once (first in first.json); both are used"));
}

// Runs of one arm at another k or on another target model are not repeats of one measurement: the arm is
// kept apart per setup, and the runs that agree stay pooled.
void TestBenchStats::mixedSetupsAreNotPooled()
{
    std::vector<BenchRecord> records(4);
    for (std::size_t i = 0; i < records.size(); ++i) {
        records[i].arm = "bf16_draft";
        records[i].promptLen = 2048;
        records[i].repeat = static_cast<int>(i % 2) + 1;
        records[i].metrics["output_throughput"] = 100.0 + static_cast<double>(i);
        records[i].extras["model_id"] = "zai-org/GLM-5.2";
        records[i].extras["num_speculative_tokens"] = i < 2 ? "2" : "3";
    }
    auto report = buildBenchReport(records, {}, {});
    QCOMPARE(report.cells.size(), std::size_t{2});
    // The arm's first setup keeps its name.
    QCOMPARE(QString::fromStdString(report.cells[0].arm), QStringLiteral("bf16_draft"));
    QCOMPARE(QString::fromStdString(report.cells[1].arm), QStringLiteral("bf16_draft [k=3]"));
    QCOMPARE(report.cells[0].records, std::size_t{2});
    const bool warned =
        std::any_of(report.warnings.begin(), report.warnings.end(), [](const BenchWarning& w) {
            return w.message.find("arm 'bf16_draft' holds runs of different target models or k") !=
                   std::string::npos;
        });
    QVERIFY(warned);

    records[3].extras["num_speculative_tokens"] = "2";
    records[2].extras["num_speculative_tokens"] = "2";
    records[3].extras["model_id"] = "Qwen/Qwen3-32B";
    report = buildBenchReport(records, {}, {});
    QCOMPARE(report.cells.size(), std::size_t{2});
    const auto cellRecords = [&](const char* arm) {
        for (const auto& cell : report.cells) {
            if (cell.arm == arm) {
                return cell.records;
            }
        }
        return std::size_t{0};
    };
    QCOMPARE(cellRecords("bf16_draft [Qwen/Qwen3-32B]"), std::size_t{1});
    QCOMPARE(cellRecords("bf16_draft"), std::size_t{3});
    // A run that does not say stays with the first setup.
    records[1].extras.clear();
    report = buildBenchReport(records, {}, {});
    QCOMPARE(cellRecords("bf16_draft"), std::size_t{3});

    records[3].extras["model_id"] = "zai-org/GLM-5.2";
    report = buildBenchReport(records, {}, {});
    QCOMPARE(report.cells.size(), std::size_t{1});
    QCOMPARE(QString::fromStdString(report.cells[0].arm), QStringLiteral("bf16_draft"));
}

void TestBenchStats::armsAreComparedWithinTheirSetup()
{
    // Two arms on Qwen3-32B at k = 3 and two on GLM-5.2 at k = 2; the Qwen bf16 arm is chosen as baseline.
    std::vector<BenchRecord> records;
    const auto add = [&](const char* arm, const char* model, const char* k, double tpot) {
        for (int repeat = 1; repeat <= 2; ++repeat) {
            BenchRecord r;
            r.arm = arm;
            r.promptLen = 2048;
            r.repeat = repeat;
            r.metrics[benchmetric::kDecodeTokS] = 1000.0 / (tpot + repeat);
            r.extras["model_id"] = model;
            r.extras["num_speculative_tokens"] = k;
            records.push_back(r);
        }
    };
    add("bf16_draft", "Qwen/Qwen3-32B", "3", 20.0);
    add("w4a16_draft", "Qwen/Qwen3-32B", "3", 19.0);
    add("glm_w4a16", "zai-org/GLM-5.2", "2", 44.0);
    add("glm_bf16", "zai-org/GLM-5.2", "2", 46.0);
    add("glm_w4a16_k3", "zai-org/GLM-5.2", "3", 43.0);
    add("unstated", "", "", 21.0);
    for (auto& r : records) {
        if (r.arm == "unstated") {
            r.extras.clear();
        }
    }
    BenchReportOptions options;
    options.baselineArm = "bf16_draft";
    const auto report = buildBenchReport(records, options, {});

    QCOMPARE(report.setups.size(), std::size_t{3});
    QCOMPARE(QString::fromStdString(report.setups[1].label()), QStringLiteral("zai-org/GLM-5.2, k=2"));
    // The GLM setup's own baseline is its bf16 arm, though it was imported second.
    QCOMPARE(QString::fromStdString(report.setups[1].baselineArm), QStringLiteral("glm_bf16"));
    QVERIFY(report.isBaseline("glm_bf16"));
    QVERIFY(!report.isBaseline("glm_w4a16"));
    const auto* glm = report.comparison(benchmetric::kDecodeTokS, 2048, "glm_w4a16");
    QVERIFY(glm);
    QCOMPARE(QString::fromStdString(glm->baselineArm), QStringLiteral("glm_bf16"));
    // Its baseline is GLM's: 1000/47 and 1000/48 tok/s, mean 21.0549645... (hand).
    QCOMPARE(glm->baseline.mean, (1000.0 / 47 + 1000.0 / 48) / 2);
    const auto* qwen = report.comparison(benchmetric::kDecodeTokS, 2048, "w4a16_draft");
    QVERIFY(qwen);
    QCOMPARE(QString::fromStdString(qwen->baselineArm), QStringLiteral("bf16_draft"));
    // Alone in its setup (GLM at k = 3), an arm is its own baseline and compared with nothing.
    QVERIFY(report.isBaseline("glm_w4a16_k3"));
    QVERIFY(!report.comparison(benchmetric::kDecodeTokS, 2048, "glm_w4a16_k3"));
    // Runs that state nothing join the first setup.
    QCOMPARE(report.setupOf("unstated"), &report.setups[0]);
    for (const auto& c : report.comparisons) {
        QCOMPARE(report.setupOf(c.baselineArm), report.setupOf(c.candidateArm));
    }
}

namespace {

const BenchReport& csvReport()
{
    static const BenchReport report = [] {
        const auto import = importBenchCsvFile(test::dataPath("bench/spec_decode_repeats_long.csv"));
        BenchReportOptions options;
        options.baselineArm = "bf16_draft";
        return buildBenchReport(import.records, options, import.warnings);
    }();
    return report;
}

} // namespace

void TestBenchStats::csvExpectedDecode_data()
{
    QTest::addColumn<qlonglong>("promptLen");
    // mean A, sd A, median A, mean B, sd B, median B, d, SE, ν, t, CI low, CI high, p, σ, Δ%
    QTest::addColumn<QStringList>("expected");
    QTest::addRow("512") << 512LL << QStringList{QStringLiteral("47.051667"),   QStringLiteral("0.461555"),
                                                 QStringLiteral("47.0050"),     QStringLiteral("49.580833"),
                                                 QStringLiteral("0.772428"),    QStringLiteral("49.5850"),
                                                 QStringLiteral("2.529167"),    QStringLiteral("0.259756"),
                                                 QStringLiteral("17.9670"),     QStringLiteral("9.73670"),
                                                 QStringLiteral("1.983368"),    QStringLiteral("3.074966"),
                                                 QStringLiteral("1.36775e-08"), QStringLiteral("5.6774"),
                                                 QStringLiteral("5.3753")};
    QTest::addRow("2048") << 2048LL << QStringList{QStringLiteral("44.633333"),   QStringLiteral("0.673381"),
                                                   QStringLiteral("44.4850"),     QStringLiteral("46.562500"),
                                                   QStringLiteral("0.859695"),    QStringLiteral("46.5850"),
                                                   QStringLiteral("1.929167"),    QStringLiteral("0.315240"),
                                                   QStringLiteral("20.8063"),     QStringLiteral("6.11967"),
                                                   QStringLiteral("1.273217"),    QStringLiteral("2.585117"),
                                                   QStringLiteral("4.69615e-06"), QStringLiteral("4.5779"),
                                                   QStringLiteral("4.3223")};
    QTest::addRow("8192") << 8192LL << QStringList{QStringLiteral("40.278333"), QStringLiteral("1.032462"),
                                                   QStringLiteral("40.4800"),   QStringLiteral("40.354167"),
                                                   QStringLiteral("1.003860"),  QStringLiteral("40.2300"),
                                                   QStringLiteral("0.075833"),  QStringLiteral("0.415704"),
                                                   QStringLiteral("21.9827"),   QStringLiteral("0.18242"),
                                                   QStringLiteral("-0.786323"), QStringLiteral("0.937989"),
                                                   QStringLiteral("0.856924"),  QStringLiteral("0.1803"),
                                                   QStringLiteral("0.1883")};
}

void TestBenchStats::csvExpectedDecode()
{
    QFETCH(qlonglong, promptLen);
    QFETCH(QStringList, expected);
    const auto& report = csvReport();
    const auto* c = report.comparison(benchmetric::kDecodeTokS, promptLen, "w4a16_draft");
    QVERIFY(c);
    QCOMPARE(c->baseline.n, std::size_t(12));
    QCOMPARE(c->candidate.n, std::size_t(12));
    const auto& w = c->welch;
    const double actual[] = {c->baseline.mean,
                             c->baseline.sd,
                             c->baseline.median,
                             c->candidate.mean,
                             c->candidate.sd,
                             c->candidate.median,
                             w.diff,
                             w.se,
                             w.df,
                             w.t,
                             w.ciLow,
                             w.ciHigh,
                             w.p,
                             w.sigma,
                             w.deltaPercent};
    for (int i = 0; i < expected.size(); ++i) {
        std::string why;
        QVERIFY2(matchesPrinted(actual[i], expected[i], &why),
                 (std::string("column ") + std::to_string(i) + ": " + why).c_str());
    }
    // The 8192 cell is deliberately not significant (bench-formats §4.5).
    QCOMPARE(w.significant(), promptLen != 8192);
}

void TestBenchStats::csvExpectedAcceptance_data()
{
    QTest::addColumn<qlonglong>("promptLen");
    // mean A, mean B, d, ν, t, CI low, CI high, p, σ
    QTest::addColumn<QStringList>("expected");
    QTest::addRow("512") << 512LL << QStringList{QStringLiteral("2.894033"),  QStringLiteral("2.820025"),
                                                 QStringLiteral("-0.074008"), QStringLiteral("20.5380"),
                                                 QStringLiteral("-6.62960"),  QStringLiteral("-0.097256"),
                                                 QStringLiteral("-0.050761"), QStringLiteral("1.62943e-06"),
                                                 QStringLiteral("4.7947")};
    QTest::addRow("2048") << 2048LL << QStringList{QStringLiteral("2.846267"),  QStringLiteral("2.789058"),
                                                   QStringLiteral("-0.057208"), QStringLiteral("21.0721"),
                                                   QStringLiteral("-3.57594"),  QStringLiteral("-0.090471"),
                                                   QStringLiteral("-0.023945"), QStringLiteral("0.00177489"),
                                                   QStringLiteral("3.1255")};
    QTest::addRow("8192") << 8192LL << QStringList{QStringLiteral("2.810325"),  QStringLiteral("2.723092"),
                                                   QStringLiteral("-0.087233"), QStringLiteral("21.7384"),
                                                   QStringLiteral("-6.42236"),  QStringLiteral("-0.115422"),
                                                   QStringLiteral("-0.059045"), QStringLiteral("1.94709e-06"),
                                                   QStringLiteral("4.7588")};
}

void TestBenchStats::csvExpectedAcceptance()
{
    QFETCH(qlonglong, promptLen);
    QFETCH(QStringList, expected);
    const auto* c = csvReport().comparison(benchmetric::kAcceptanceLength, promptLen, "w4a16_draft");
    QVERIFY(c);
    const auto& w = c->welch;
    const double actual[] = {c->baseline.mean, c->candidate.mean, w.diff, w.df,   w.t,
                             w.ciLow,          w.ciHigh,          w.p,    w.sigma};
    for (int i = 0; i < expected.size(); ++i) {
        std::string why;
        QVERIFY2(matchesPrinted(actual[i], expected[i], &why),
                 (std::string("column ") + std::to_string(i) + ": " + why).c_str());
    }
}

// The locale-independent text every report, card and CLI table uses.
void TestBenchStats::numberText()
{
    QCOMPARE(formatFixed(3.14159, 2), std::string("3.14"));
    QCOMPARE(formatFixed(-0.0001, 2), std::string("0.00")); // no "-0.00"
    QCOMPARE(formatFixed(-1.5, 1), std::string("-1.5"));
    QCOMPARE(formatFixed(std::nan(""), 2), std::string("n/a"));
    QCOMPARE(formatFixed(-HUGE_VAL, 2), std::string("-∞"));
    QCOMPARE(formatGeneral(0.000123456, 3), std::string("0.000123"));
    QCOMPARE(formatBytes(0), std::string("0 B"));
    QCOMPARE(formatBytes(1023), std::string("1023 B"));
    QCOMPARE(formatBytes(1536), std::string("1.50 KiB"));
    QCOMPARE(formatBytes(7612600000ull), std::string("7.09 GiB"));
    const auto scaled = scaleBytes(3ull << 40);
    QCOMPARE(scaled.value, 3.0);
    QCOMPARE(std::string(scaled.unit), std::string("TiB"));
}

QTEST_GUILESS_MAIN(TestBenchStats)
#include "tst_bench_stats.moc"
