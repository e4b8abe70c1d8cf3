// `acceptance --export-rates`: the measured per-position acceptance handed to vLLM's synthetic rejection
// sampler, on the trained EAGLE-3 head. The file is checked against vLLM's own rules for the option,
// written down here from vllm/config/speculative.py (SpeculativeConfig._resolve_synthetic_acceptance_rates,
// vllm-project/vllm at 002e77c1): rejection_sample_method "synthetic"; synthetic_acceptance_rates of length
// num_speculative_tokens, every entry in [0, 1], non-increasing; entry i the unconditional probability that
// the first i + 1 draft tokens are all accepted.
#include "core/io/checkpoint.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

using namespace spark;

namespace {

/// vLLM's checks of the option; empty when they pass.
QString vllmRejects(const nlohmann::json& config)
{
    if (config.value("rejection_sample_method", "") != "synthetic") {
        return QStringLiteral("rejection_sample_method is not synthetic");
    }
    if (config.contains("synthetic_acceptance_length")) {
        return QStringLiteral(
            "synthetic_acceptance_rates and synthetic_acceptance_length exclude each other");
    }
    const auto n = config.at("num_speculative_tokens").get<std::size_t>();
    const auto rates = config.at("synthetic_acceptance_rates").get<std::vector<double>>();
    if (rates.size() != n) {
        return QStringLiteral("synthetic_acceptance_rates must have length %1").arg(n);
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!(rates[i] >= 0.0 && rates[i] <= 1.0)) {
            return QStringLiteral("entries must be in [0, 1]");
        }
        if (i > 0 && rates[i] > rates[i - 1]) {
            return QStringLiteral("must be non-increasing");
        }
    }
    return {};
}

} // namespace

class TestTrainedRates : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void exportedRatesPassVllmChecks_data()
    {
        QTest::addColumn<QStringList>("mode");
        QTest::addColumn<QString>("ratesOf");
        QTest::addRow("paired, quantized") << QStringList{} << QStringLiteral("quantized");
        QTest::addRow("paired, bf16") << QStringList{} << QStringLiteral("bf16");
        QTest::addRow("replayed loop, quantized")
            << QStringList{QStringLiteral("--replay")} << QStringLiteral("quantized");
    }

    void exportedRatesPassVllmChecks()
    {
        QFETCH(QStringList, mode);
        QFETCH(QString, ratesOf);
        const auto trained = test::dataPath("trained");
        QTemporaryDir dir;
        const auto file = dir.filePath(QStringLiteral("rates.json")).toStdString();
        std::vector<std::string> args{"acceptance",
                                      (trained / "eagle3").string(),
                                      "--hidden-states",
                                      (trained / "capture-hs").string(),
                                      "--target",
                                      (trained / "target").string(),
                                      "--k",
                                      "3",
                                      "--anchors",
                                      "200",
                                      "--scheme",
                                      "Linear=W4A16",
                                      "--json",
                                      "--export-rates",
                                      file,
                                      "--rates-of",
                                      ratesOf.toStdString()};
        for (const auto& m : mode) {
            args.push_back(m.toStdString());
        }
        const auto r = test::runCli(args);
        QVERIFY2(r.exitCode == 0, r.err.c_str());
        const auto rates = readJsonFile(file);
        const auto& config = rates.at("speculative_config");
        const auto why = vllmRejects(config);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        QCOMPARE(config.at("num_speculative_tokens").get<int>(), 3);
        QCOMPARE(rates.at("source").at("rates_of").get<std::string>(), ratesOf.toStdString());
        // The rates are the a_i the same run printed.
        const auto printed = nlohmann::json::parse(r.out);
        const bool replay = !mode.isEmpty();
        const auto& summary =
            replay ? printed.at(ratesOf == QStringLiteral("quantized") ? "quantized" : "base") : printed;
        const char* column =
            !replay && ratesOf == QStringLiteral("quantized") ? "accept_quantized" : "accept_base";
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(config.at("synthetic_acceptance_rates").at(i).get<double>(),
                     summary.at("positions").at(i).at(column).get<double>());
        }
    }

    void refusesWhatItCannotExport()
    {
        const auto trained = test::dataPath("trained");
        QTemporaryDir dir;
        const auto file = dir.filePath(QStringLiteral("rates.json")).toStdString();
        const std::vector<std::string> base{
            "acceptance", (trained / "eagle3").string(), "--hidden-states", (trained / "capture-hs").string(),
            "--target",   (trained / "target").string(), "--anchors",       "16"};
        auto args = base;
        args.insert(args.end(), {"--bf16-only", "--export-rates", file, "--rates-of", "quantized"});
        auto r = test::runCli(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.find("needs a quantized draft") != std::string::npos, r.err.c_str());
        args = base;
        args.insert(args.end(), {"--bf16-only", "--rates-of", "bf16"});
        QCOMPARE(test::runCli(args).exitCode, 2);
        QVERIFY(!std::filesystem::exists(file));
    }
};

QTEST_GUILESS_MAIN(TestTrainedRates)
#include "tst_trainedrates.moc"
