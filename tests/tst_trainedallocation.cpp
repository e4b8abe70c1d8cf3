// `plan --budget --hidden-states` on the trained EAGLE-3 head, as a user runs it: the JSON contract of the
// acceptance objective, the plan file it saves, and the options it refuses. (The figures themselves are held
// against the reference's own decoding loop by tools/reference/decode.py allocated and tst_trainedreplay.)
#include "core/io/checkpoint.h"
#include "core/util/statistics.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace spark;

class TestTrainedAllocation : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void cliChoosesByAcceptance();
    void cliRefusesWhatItCannotDo();
    void objectiveOrdersTheSecondHeadAsAcceptanceDoes();
};

void TestTrainedAllocation::cliChoosesByAcceptance()
{
    // The trained EAGLE-3 head on the 8 sequences of the speculators directory: small anchor counts keep it
    // quick; what is checked is the contract, the numbers are checked against the reference loop elsewhere.
    const auto trained = test::dataPath("trained");
    QTemporaryDir dir;
    const auto planFile = dir.filePath(QStringLiteral("plan.json")).toStdString();
    const auto r = test::runCli({"plan",
                                 (trained / "eagle3").string(),
                                 "--budget",
                                 "preset",
                                 "--compare-preset",
                                 "--hidden-states",
                                 (trained / "capture-hs").string(),
                                 "--target-model",
                                 (trained / "target").string(),
                                 "--k",
                                 "1",
                                 "--screen-anchors",
                                 "8",
                                 "--confirm-anchors",
                                 "24",
                                 "--report-anchors",
                                 "96",
                                 "--json",
                                 "--save-plan",
                                 planFile});
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    const auto a = nlohmann::json::parse(r.out).at("allocation");
    const auto& acceptance = a.at("acceptance");
    QCOMPARE(acceptance.at("k").get<int>(), 1);
    QCOMPARE(acceptance.at("anchors").at("screen").get<int>(), 8);
    QCOMPARE(acceptance.at("anchors").at("confirm").get<int>(), 24);
    QCOMPARE(acceptance.at("anchors").at("report").get<int>(), 96);
    QCOMPARE(acceptance.at("plan").at("report").at("anchors").get<int>(), 96);
    // Beside the held-out numbers, the floor kernel numerics put under them, on the same anchors.
    QCOMPARE(acceptance.at("numerics_floor").at("anchors").get<int>(), 96);
    const auto& floor = acceptance.at("numerics_floor");
    QVERIFY(floor.at("tau_delta_ci")[0].get<double>() <= floor.at("tau_delta").get<double>() &&
            floor.at("tau_delta").get<double>() <= floor.at("tau_delta_ci")[1].get<double>());
    // The loss is the upper end of the loss of expected acceptance each chosen unit made alone (minus the
    // low end of its change's interval), summed (draft-forward.md §13).
    QCOMPARE(acceptance.at("loss").get<std::string>(), std::string("expected-acceptance"));
    QCOMPARE(acceptance.at("objective_temperature").get<double>(), 0.5);
    double sum = 0;
    for (const auto& unit : acceptance.at("units")) {
        const auto& alone = unit.at("alone");
        sum -= alone.at("objective_ci")[0].get<double>();
    }
    QVERIFY(std::fabs(sum - a.at("acceptance_loss").get<double>()) <= 1e-12 * std::max(1.0, sum));
    QVERIFY(!a.contains("weighted_error"));
    QCOMPARE(acceptance.at("plan").at("streamed_bytes"), a.at("streamed_bytes"));
    // At the recipe's bytes the plan is no larger than the recipe.
    QVERIFY(a.at("streamed_bytes").get<std::uint64_t>() <=
            a.at("preset_comparison").at("preset_point").at("streamed_bytes").get<std::uint64_t>());
    // The saved plan keeps the record and gives the same plan without measuring again.
    const auto saved = readJsonFile(planFile);
    QCOMPARE(saved.at("budget").at("acceptance_loss"), a.at("acceptance_loss"));
    const auto again =
        test::runCli({"plan", (trained / "eagle3").string(), "--plan-file", planFile, "--json"});
    QVERIFY2(again.exitCode == 0, again.err.c_str());
    QCOMPARE(nlohmann::json::parse(again.out).at("streamed_after"), a.at("streamed_bytes"));
}

void TestTrainedAllocation::cliRefusesWhatItCannotDo()
{
    const auto trained = test::dataPath("trained");
    const auto draft = (trained / "eagle3").string();
    const auto capture = (trained / "capture-hs").string();
    const auto refused = [](const std::vector<std::string>& args, const char* says) {
        const auto r = test::runCli(args);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.find(says) != std::string::npos, r.err.c_str());
    };
    refused({"plan", draft, "--budget", "preset", "--k", "2"}, "--k needs --hidden-states");
    refused({"plan", draft, "--budget", "preset", "--hidden-states", capture, "--alpha", "Linear=2"},
            "objective is the measured acceptance");
    refused({"plan", draft, "--budget", "preset", "--hidden-states", capture, "--best-speed"},
            "--best-speed needs");
    refused({"plan", draft, "--budget", "preset", "--hidden-states", capture, "--speed-points", "3"},
            "--speed-points needs --best-speed");
    refused({"plan", draft, "--hidden-states", capture}, "needs --budget");
    refused({"plan", draft, "--budget", "preset", "--hidden-states", capture, "--loss", "tau"},
            "--loss: loss 'tau'");
    refused({"plan", draft, "--budget", "preset", "--loss", "kl"}, "--loss needs --hidden-states");
    refused({"plan", draft, "--budget", "preset", "--hidden-states", (trained / "nothing-here").string()},
            "nothing-here");
}

void TestTrainedAllocation::objectiveOrdersTheSecondHeadAsAcceptanceDoes()
{
    // The EAGLE-3 head trained on another seed and never tuned on, quantized whole two ways. On every anchor
    // of the capture W4A16 g32 rtn accepts more than NVFP4A16 mse (their paired difference of accepted
    // lengths is +0.023 with an interval clear of 0), yet its KL to the BF16 draft is almost twice as
    // large: KL orders the two against acceptance. The target-aware objective orders them as acceptance does.
    const auto trained = test::dataPath("trained");
    const auto head = (trained / "eagle3-seed2026").string();
    QTemporaryDir dir;
    struct Measured
    {
        double kl = 0, objective = 0;
        std::vector<int> accepted;
    };
    const auto measure = [&](const std::string& scheme, const std::string& rounding) {
        const auto out = dir.filePath(QString::fromStdString(scheme + "-" + rounding)).toStdString();
        const auto q =
            test::runCli({"quantize", head, "--out", out, "--scheme", "Linear=" + scheme, "--rounding",
                          rounding, "--no-verify", "--target-model", (trained / "target").string()});
        Measured m;
        if (q.exitCode != 0) {
            qWarning("%s", q.err.c_str());
            return m;
        }
        const auto table = out + ".csv";
        const auto r = test::runCli({"acceptance", head, "--hidden-states", (trained / "capture").string(),
                                     "--target-model", (trained / "target").string(), "--quantized", out,
                                     "--k", "4", "--anchors", "all", "--objective-temperature", "0.5",
                                     "--anchor-table", table, "--json"});
        if (r.exitCode != 0) {
            qWarning("%s", r.err.c_str());
            return m;
        }
        const auto j = nlohmann::json::parse(r.out);
        for (const auto& p : j.at("positions")) {
            m.kl += p.at("mean_kl").get<double>();
        }
        m.objective = j.at("objective")[0].at("delta").get<double>();
        std::istringstream lines(test::readFile(table));
        std::string line;
        std::getline(lines, line); // header
        while (std::getline(lines, line)) {
            const auto third = line.find(',', line.find(',', line.find(',') + 1) + 1);
            m.accepted.push_back(std::stoi(line.substr(third + 1)));
        }
        return m;
    };
    const auto g32 = measure("W4A16:g32", "rtn");
    const auto nvfp4 = measure("NVFP4A16", "mse");
    QCOMPARE(g32.accepted.size(), std::size_t{12032});
    QCOMPARE(nvfp4.accepted.size(), g32.accepted.size());
    std::vector<double> d;
    for (std::size_t i = 0; i < g32.accepted.size(); ++i) {
        d.push_back(g32.accepted[i] - nvfp4.accepted[i]);
    }
    const auto difference = pairedMeanInterval(d);
    QVERIFY2(difference.low > 0, std::to_string(difference.mean).c_str());
    QVERIFY(g32.kl > nvfp4.kl);
    QVERIFY(g32.objective > nvfp4.objective);
}

QTEST_GUILESS_MAIN(TestTrainedAllocation)
#include "tst_trainedallocation.moc"
