// `sparkulator-cli report` end to end: --json values equal bench-formats.md §4.5, --markdown tables,
// a /metrics pair in the order given, errors with file and line, and --plot writing PNG, SVG and PDF.
#include "testsupport.h"

#include <QDir>
#include <QTest>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

using namespace spark;

namespace {

std::string data(const char* name)
{
    return test::dataPath(std::string("bench/") + name).string();
}

const nlohmann::json* findComparison(const nlohmann::json& report, const std::string& metric, long long len)
{
    for (const auto& c : report.at("comparisons")) {
        if (c.at("metric") == metric && c.at("prompt_len") == len) {
            return &c;
        }
    }
    return nullptr;
}

} // namespace

class TestBenchCli : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void jsonMatchesExpected();
    void markdownTables();
    void metricsPairInOrder();
    void errorsNameFileAndLine_data();
    void errorsNameFileAndLine();
    void plotFiles_data();
    void plotFiles();
};

void TestBenchCli::jsonMatchesExpected()
{
    const auto r =
        test::runCli({"report", data("spec_decode_repeats_long.csv"), "--baseline", "bf16_draft", "--json"});
    QCOMPARE(r.exitCode, 0);
    const auto report = nlohmann::json::parse(r.out);
    QCOMPARE(report.at("baseline").get<std::string>(), std::string("bf16_draft"));
    QCOMPARE(report.at("cells").size(), std::size_t(6));
    const auto* c = findComparison(report, "decode_tok_s", 2048);
    QVERIFY(c);
    // bench-formats §4.5, 2048 row: d 1.929167, ν 20.8063, t 6.11967, CI [1.273217, 2.585117], p 4.69615e-06,
    // σ 4.5779.
    QVERIFY(std::abs(c->at("diff").get<double>() - 1.929167) < 5e-7);
    QVERIFY(std::abs(c->at("df").get<double>() - 20.8063) < 5e-5);
    QVERIFY(std::abs(c->at("t").get<double>() - 6.11967) < 5e-6);
    QVERIFY(std::abs(c->at("ci_low").get<double>() - 1.273217) < 5e-7);
    QVERIFY(std::abs(c->at("ci_high").get<double>() - 2.585117) < 5e-7);
    QVERIFY(std::abs(c->at("p").get<double>() / 4.69615e-06 - 1) < 2e-6);
    QVERIFY(std::abs(c->at("sigma_gaussian_equivalent").get<double>() - 4.5779) < 5e-5);
    QVERIFY(std::abs(c->at("delta_percent").get<double>() - 4.3223) < 5e-5);
    QCOMPARE(c->at("baseline").at("n").get<int>(), 12);
    QVERIFY(std::abs(c->at("baseline").at("median").get<double>() - 44.4850) < 5e-5);
    QCOMPARE(findComparison(report, "decode_tok_s", 8192)->at("significant").get<bool>(), false);
    const auto* al = findComparison(report, "acceptance_length", 512);
    QVERIFY(std::abs(al->at("t").get<double>() - -6.62960) < 5e-6);
}

void TestBenchCli::markdownTables()
{
    const auto r = test::runCli({"report", data("spec_decode_repeats_long.csv"), "--markdown"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.find("## Benchmark cells") != std::string::npos, r.out.c_str());
    QVERIFY(r.out.find("| arm | prompt len | n | decode tok/s (mean ± sd) |") != std::string::npos);
    QVERIFY(r.out.find("| bf16_draft | 512 | 12 | 47.052 ± 0.462 | 47.005 |") != std::string::npos);
    QVERIFY(r.out.find("## decode tok/s: arm − bf16_draft") != std::string::npos);
    // 8192: the CI contains zero, marked not significant.
    QVERIFY(r.out.find("| 8192 | w4a16_draft | bf16_draft | 40.278 ± 1.032 | 40.354 ± 1.004 | 0.076 | 0.19 | "
                       "[-0.786, 0.938] |") != std::string::npos);
    QVERIFY(r.out.find("(n.s.)") != std::string::npos);
}

void TestBenchCli::metricsPairInOrder()
{
    const auto r = test::runCli({"report", data("metrics_before.prom"), data("metrics_after.prom"), "--arm",
                                 "bf16", "--prompt-len", "2048", "--json"});
    QCOMPARE(r.exitCode, 0);
    const auto report = nlohmann::json::parse(r.out);
    const auto& cell = report.at("cells").at(0);
    QCOMPARE(cell.at("arm").get<std::string>(), std::string("bf16"));
    QCOMPARE(cell.at("pooled_counters").at("num_drafts").get<double>(), 2859.0);
    QVERIFY(cell.at("pooled_counters").at("accepted_per_position") ==
            nlohmann::json({2295.0, 1726.0, 1319.0}));
    QVERIFY(std::abs(cell.at("metrics").at("acceptance_rate").at("mean").get<double>() * 100 -
                     62.25953130465197) < 1e-9);
    QVERIFY(std::abs(cell.at("metrics").at("acceptance_length").at("mean").get<double>() -
                     2.8677859391395595) < 1e-12);
    // The reverse order is a counter reset: an error naming the file.
    const auto reversed = test::runCli({"report", data("metrics_after.prom"), data("metrics_before.prom")});
    QCOMPARE(reversed.exitCode, 2);
    QVERIFY2(reversed.err.find("metrics_before.prom:") != std::string::npos, reversed.err.c_str());
    QVERIFY(reversed.err.find("restarted") != std::string::npos);
}

void TestBenchCli::errorsNameFileAndLine_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("content");
    QTest::addColumn<QString>("expected");
    QTest::addRow("csv") << "bad.csv"
                         << "arm,prompt_len,decode_tok_s\na,512,1\na,512,x\n"
                         << "bad.csv:3: ";
    QTest::addRow("json") << "bad.json"
                          << "{\"arm\": \"a\",\n\"x\": [1,\n}"
                          << "bad.json:3: ";
    QTest::addRow("prom_unpaired") << "one.prom"
                                   << "# TYPE x counter\nx_total 1\n"
                                   << "one.prom: ";
}

void TestBenchCli::errorsNameFileAndLine()
{
    QFETCH(QString, name);
    QFETCH(QString, content);
    QFETCH(QString, expected);
    const auto dir = std::filesystem::path(QDir::tempPath().toStdString()) / "tst_bench_cli_errors";
    const auto path = dir / name.toStdString();
    test::writeFile(path, content.toStdString());
    const auto r = test::runCli({"report", path.string()});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.find(path.parent_path().string() + "/" + expected.toStdString()) != std::string::npos,
             r.err.c_str());
    std::filesystem::remove_all(dir);
}

void TestBenchCli::plotFiles_data()
{
    QTest::addColumn<QString>("suffix");
    QTest::addColumn<QByteArray>("magic");
    QTest::addRow("png") << "png" << QByteArray("\x89PNG", 4);
    QTest::addRow("svg") << "svg" << QByteArray("<?xml");
    QTest::addRow("pdf") << "pdf" << QByteArray("%PDF");
}

void TestBenchCli::plotFiles()
{
    QFETCH(QString, suffix);
    QFETCH(QByteArray, magic);
    const auto dir = std::filesystem::path(QDir::tempPath().toStdString()) / "tst_bench_cli_plot";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto out = dir / ("report." + suffix.toStdString());
    const auto r = test::runCli({"report", data("spec_decode_repeats_long.csv"), "--plot", out.string()});
#if !SPARK_TEST_CLI_PLOTS
    // A build without the GUI (e.g. the aarch64 cross build) has a CLI without plots, which says so.
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.find("--plot needs a build with the GUI libraries") != std::string::npos, r.err.c_str());
    QSKIP("sparkulator-cli is built without the GUI libraries (SPARK_BUILD_GUI=OFF): no plots");
#endif
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    QVERIFY(std::filesystem::exists(out));
    QVERIFY(std::filesystem::file_size(out) > 1000);
    const auto bytes = test::readFile(out);
    QVERIFY(bytes.compare(0, std::size_t(magic.size()), magic.constData(), std::size_t(magic.size())) == 0);
    if (suffix == QLatin1String("svg")) {
        QVERIFY(bytes.find("<svg") != std::string::npos);
        QVERIFY(bytes.find("Decode speed") != std::string::npos);
    }
    // An unknown extension is refused.
    const auto bad =
        test::runCli({"report", data("spec_decode_repeats_long.csv"), "--plot", (dir / "x.gif").string()});
    QCOMPARE(bad.exitCode, 2);
    std::filesystem::remove_all(dir);
}

QTEST_GUILESS_MAIN(TestBenchCli)
#include "tst_bench_cli.moc"
