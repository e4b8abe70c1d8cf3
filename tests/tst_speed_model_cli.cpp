// `sparkulator-cli report --drafter-ms` end to end: the GLM worked example of speed-model.md §5
// through the real binary (JSON, text, Markdown), the invariants on the bundled samples, the saving from a
// plan of a demo draft (its streamed bytes and its architecture's drafter kind), and errors that name the
// cell.
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

const char* const kGlmBf16 = "glm-dspark-bf16-infqps-concurrency1-GLM-5.2-20260301-101500.json";
const char* const kGlmW4 = "glm-dspark-w4a16-infqps-concurrency1-GLM-5.2-20260301-104000.json";

const nlohmann::json& cellOf(const nlohmann::json& report, const std::string& arm, long long len)
{
    for (const auto& c : report.at("cells")) {
        if (c.at("arm") == arm && c.at("prompt_len") == len) {
            return c;
        }
    }
    throw std::runtime_error("no cell " + arm);
}

// @p value rounded to 4 significant digits equals @p expected (as printed in speed-model.md).
bool sig4(double value, double expected)
{
    const double scale = std::pow(10.0, 3 - std::floor(std::log10(std::abs(expected))));
    return std::round(value * scale) == std::round(expected * scale);
}

double num(const nlohmann::json& j)
{
    return j.get<double>();
}

} // namespace

class TestSpeedModelCli : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void glmJson();
    void glmTextAndMarkdown();
    void samplesInvariants();
    void savingFromPlan();
    void cardPredictsForThePlan();
    void errors_data();
    void errors();
};

void TestSpeedModelCli::glmJson()
{
    const auto r = test::runCli({"report", data(kGlmBf16), data(kGlmW4), "--drafter-ms", "15.88",
                                 "--drafter-kind", "block", "--saving-ms", "7.9", "--json"});
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    const auto report = nlohmann::json::parse(r.out);
    const auto& s = cellOf(report, "bf16_draft", 2048).at("speed_model");
    QCOMPARE(s.at("k").get<int>(), 2);
    QVERIFY(sig4(num(s.at("acceptance_per_position")[0]), 0.6460));
    QVERIFY(sig4(num(s.at("acceptance_per_position")[1]), 0.3872));
    QVERIFY(std::abs(num(s.at("tokens_per_verify")[2]) - 2.0332) < 1e-12);
    QVERIFY(sig4(num(s.at("cycle_ms")), 100.6));
    QCOMPARE(num(s.at("drafter_ms")), 15.88);
    QCOMPARE(num(s.at("verify_ms_per_token")), 0.0);
    QVERIFY(sig4(num(s.at("verify_ms")), 84.72));
    QVERIFY(sig4(num(s.at("predicted_tok_s")[0]), 11.80));
    QVERIFY(sig4(num(s.at("predicted_tok_s")[1]), 16.36));
    QVERIFY(sig4(num(s.at("predicted_tok_s")[2]), 20.21));
    QCOMPARE(s.at("best_k").get<int>(), 2);
    const auto& q = s.at("quantized");
    QCOMPARE(num(q.at("saving_ms")), 7.9);
    QVERIFY(sig4(num(q.at("cycle_ms")), 92.70));
    QVERIFY(sig4(num(q.at("predicted_tok_s")), 21.93));
    QVERIFY(std::abs(num(q.at("predicted_change_pct")) - 8.5) < 0.05);
    QCOMPARE(q.at("predicted_tok_s_by_k").size(), std::size_t(3));
    QCOMPARE(q.at("best_k").get<int>(), 2);
    QVERIFY(sig4(num(q.at("measured_tok_s")), 21.97));
    QVERIFY(std::abs(num(q.at("measured_change_pct")) - 8.7) < 0.05);
    QVERIFY(std::abs(num(q.at("residual_pct")) - 0.2) < 0.05);
    QVERIFY(sig4(num(q.at("predicted_tok_s_measured_acceptance")), 21.75));
    QVERIFY(std::abs(num(q.at("predicted_change_pct_measured_acceptance")) - 7.6) < 0.05);
    QVERIFY(std::abs(num(q.at("residual_pct_measured_acceptance")) - 1.0) < 0.05);
    QCOMPARE(report.at("speed_model").at("drafter_kind").get<std::string>(), std::string("block"));
    // The quantized arm's own cell has no prediction of its own, and runs with t_D − Δ.
    const auto& w = cellOf(report, "w4a16_draft", 2048).at("speed_model");
    QVERIFY(!w.contains("quantized"));
    QVERIFY(std::abs(num(w.at("drafter_ms")) - 7.98) < 1e-12);
}

void TestSpeedModelCli::glmTextAndMarkdown()
{
    const std::vector<std::string> base{"report",       data(kGlmBf16), data(kGlmW4),
                                        "--drafter-ms", "15.88",        "--drafter-kind",
                                        "block",        "--saving-ms",  "7.9"};
    const auto text = test::runCli(base);
    QVERIFY2(text.exitCode == 0, text.err.c_str());
    QVERIFY2(text.out.find("speed model: drafter 15.88 ms per cycle, block (given)") != std::string::npos,
             text.out.c_str());
    QVERIFY(text.out.find("0.6460 0.3872") != std::string::npos);
    QVERIFY(text.out.find("11.80 16.36 20.21") != std::string::npos);
    QVERIFY(text.out.find("92.70") != std::string::npos);
    QVERIFY(text.out.find("+8.522 %") != std::string::npos);
    QVERIFY(text.out.find("+0.1721 %") != std::string::npos);
    QVERIFY(text.out.find("assumptions:") != std::string::npos);
    auto mdArgs = base;
    mdArgs.push_back("--markdown");
    const auto md = test::runCli(mdArgs);
    QCOMPARE(md.exitCode, 0);
    QVERIFY(md.out.find("## Speed model: predicted decode tok/s against k") != std::string::npos);
    QVERIFY(md.out.find("| 2048 | 20.21 | 7.900 | 92.70 | 21.93 | +8.522 % |") != std::string::npos);
    // Without --drafter-ms the report is the statistics alone.
    const auto plain = test::runCli({"report", data(kGlmBf16), data(kGlmW4), "--json"});
    QCOMPARE(plain.exitCode, 0);
    QVERIFY(!nlohmann::json::parse(plain.out).contains("speed_model"));
}

void TestSpeedModelCli::samplesInvariants()
{
    // Every bundled sample at once; the /metrics pair is the BF16 JSON's run, tagged like it.
    const auto r = test::runCli(
        {"report", data("spec_decode_repeats_long.csv"), data("metrics_before.prom"),
         data("metrics_after.prom"), data("bf16-draft-infqps-concurrency1-Qwen3-32B-20251202-141503.json"),
         data("w4a16-draft-infqps-concurrency1-Qwen3-32B-20251202-143122.json"), "--arm", "bf16_draft",
         "--prompt-len", "2048", "--drafter-ms", "8", "--json"});
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    const auto report = nlohmann::json::parse(r.out);
    QCOMPARE(report.at("cells").size(), std::size_t(6));
    for (const auto& c : report.at("cells")) {
        const auto& s = c.at("speed_model");
        const int k = s.at("k").get<int>();
        QCOMPARE(k, 3);
        // τ(k) is the mean acceptance length 1 + Σaccepted/Σdrafts (the CSV rounds rates to 4 decimals).
        const double al = num(c.at("pooled_counters").at("acceptance_length"));
        QVERIFY(std::abs(num(s.at("tokens_per_verify")[static_cast<std::size_t>(k)]) - al) <= k * 0.5e-4);
        // D(k) is the measured mean decode tok/s.
        const double d = num(c.at("metrics").at("decode_tok_s").at("mean"));
        QVERIFY(std::abs(num(s.at("predicted_tok_s")[static_cast<std::size_t>(k)]) / d - 1) < 1e-12);
    }
}

void TestSpeedModelCli::savingFromPlan()
{
    const auto dir = std::filesystem::path(QDir::tempPath().toStdString()) / "tst_speed_model_cli_plan";
    std::filesystem::remove_all(dir);
    const auto demo =
        test::runCli({"demo", "--arch", "glm-dspark", "--scale", "tiny", "--out", dir.string()});
    QVERIFY2(demo.exitCode == 0, demo.err.c_str());
    const auto plan = test::runCli({"plan", dir.string(), "--json"});
    QVERIFY2(plan.exitCode == 0, plan.err.c_str());
    const auto planJson = nlohmann::json::parse(plan.out);
    const double before = num(planJson.at("streamed_before"));
    const double after = num(planJson.at("streamed_after"));
    QVERIFY(before > after && after > 0);

    const auto r = test::runCli(
        {"report", data(kGlmBf16), data(kGlmW4), "--drafter-ms", "15.88", "--plan", dir.string(), "--json"});
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    const auto report = nlohmann::json::parse(r.out);
    const auto& model = report.at("speed_model");
    // DSpark is a block drafter; Δ = t_D·(1 − S′/S).
    QCOMPARE(model.at("drafter_kind").get<std::string>(), std::string("block"));
    QVERIFY(model.at("drafter_kind_basis").get<std::string>().find("architecture") != std::string::npos);
    QCOMPARE(num(model.at("streamed_before")), before);
    const double saving = 15.88 * (1 - after / before);
    QVERIFY(std::abs(num(model.at("saving_ms")) - saving) < 1e-9);
    const auto& q = cellOf(report, "bf16_draft", 2048).at("speed_model").at("quantized");
    QVERIFY(std::abs(num(q.at("cycle_ms")) - (1000 * 2.0332 / 20.21 - saving)) < 1e-9);
    // A plan option is passed on to the plan: 8 bits save less than 4.
    const auto r8 = test::runCli(
        {"report", data(kGlmBf16), "--drafter-ms", "15.88", "--plan", dir.string(), "--bits", "8", "--json"});
    QVERIFY2(r8.exitCode == 0, r8.err.c_str());
    QVERIFY(num(nlohmann::json::parse(r8.out).at("speed_model").at("saving_ms")) < saving);
    std::filesystem::remove_all(dir);
}

void TestSpeedModelCli::cardPredictsForThePlan()
{
    const auto dir = std::filesystem::path(QDir::tempPath().toStdString()) / "tst_speed_model_cli_card";
    std::filesystem::remove_all(dir);
    const auto demo =
        test::runCli({"demo", "--arch", "glm-dspark", "--scale", "tiny", "--out", dir.string()});
    QVERIFY2(demo.exitCode == 0, demo.err.c_str());
    // The GLM worked example's saving, given: the card shows predicted and measured change side by side.
    const auto r = test::runCli({"card", dir.string(), "--bench", data(kGlmBf16), "--bench", data(kGlmW4),
                                 "--drafter-ms", "15.88", "--saving-ms", "7.9"});
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    QVERIFY2(r.out.find("## Predicted and measured speed") != std::string::npos, r.out.c_str());
    QVERIFY(r.out.find("| 2048 | 20.21 | 21.93 | +8.522 % | 21.97 | +8.709 % | +0.1721 % | 2 → 2 |") !=
            std::string::npos);
    // The kind came from the draft's architecture (DSpark: block).
    QVERIFY(r.out.find("Drafter: block (") != std::string::npos);
    QVERIFY(r.out.find("Assumptions of the prediction:") != std::string::npos);
    // Without a saving, the plan's streamed bytes give it.
    const auto fromPlan =
        test::runCli({"card", dir.string(), "--bench", data(kGlmBf16), "--drafter-ms", "15.88"});
    QVERIFY2(fromPlan.exitCode == 0, fromPlan.err.c_str());
    QVERIFY(fromPlan.out.find("the plan's bytes per draft step") != std::string::npos);
    // A drafter time needs benchmarks.
    const auto noBench = test::runCli({"card", dir.string(), "--drafter-ms", "15.88"});
    QCOMPARE(noBench.exitCode, 2);
    QVERIFY(noBench.err.find("--bench") != std::string::npos);
    std::filesystem::remove_all(dir);
}

void TestSpeedModelCli::errors_data()
{
    QTest::addColumn<QString>("csv");
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("expected");
    const QString header =
        QStringLiteral("arm,prompt_len,decode_tok_s,acc_pos0,acc_pos1,num_drafts,num_draft_tokens,"
                       "num_accepted_tokens\n");
    QTest::addRow("increasing")
        << header + QStringLiteral("bf16,512,40,0.5,0.7,100,200,120\n")
        << QStringList{QStringLiteral("--drafter-ms"), QStringLiteral("5")}
        << "speed model: arm 'bf16' at prompt length 512: per-position acceptance increases";
    QTest::addRow("drafter too slow")
        << header + QStringLiteral("bf16,512,40,0.7,0.5,100,200,120\n")
        << QStringList{QStringLiteral("--drafter-ms"), QStringLiteral("80")}
        << "arm 'bf16' at prompt length 512: the drafter time 80.00 ms is not shorter "
           "than the cycle";
    QTest::addRow("k unknown") << QStringLiteral(
                                      "arm,prompt_len,decode_tok_s,num_drafts,num_draft_tokens,num_accepted_"
                                      "tokens\nbf16,512,40,100,200,120\n")
                               << QStringList{QStringLiteral("--drafter-ms"), QStringLiteral("5")}
                               << "arm 'bf16' at prompt length 512: k unknown";
    QTest::addRow("saving without drafter") << header + QStringLiteral("bf16,512,40,0.7,0.5,100,200,120\n")
                                            << QStringList{QStringLiteral("--saving-ms"), QStringLiteral("5")}
                                            << "--saving-ms needs --drafter-ms";
    QTest::addRow("plan option without plan")
        << header + QStringLiteral("bf16,512,40,0.7,0.5,100,200,120\n")
        << QStringList{QStringLiteral("--drafter-ms"), QStringLiteral("5"), QStringLiteral("--bits"),
                       QStringLiteral("8")}
        << "--bits is a plan option: it needs --plan";
    QTest::addRow("bad kind") << header + QStringLiteral("bf16,512,40,0.7,0.5,100,200,120\n")
                              << QStringList{QStringLiteral("--drafter-ms"), QStringLiteral("5"),
                                             QStringLiteral("--drafter-kind"), QStringLiteral("tree")}
                              << "--drafter-kind must be chain";
}

void TestSpeedModelCli::errors()
{
    QFETCH(QString, csv);
    QFETCH(QStringList, options);
    QFETCH(QString, expected);
    const auto dir = std::filesystem::path(QDir::tempPath().toStdString()) / "tst_speed_model_cli_errors";
    const auto path = dir / "cells.csv";
    test::writeFile(path, csv.toStdString());
    std::vector<std::string> args{"report", path.string()};
    for (const auto& o : options) {
        args.push_back(o.toStdString());
    }
    const auto r = test::runCli(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.find(expected.toStdString()) != std::string::npos, r.err.c_str());
    std::filesystem::remove_all(dir);
}

QTEST_GUILESS_MAIN(TestSpeedModelCli)
#include "tst_speed_model_cli.moc"
