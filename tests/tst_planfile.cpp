// Plan files: the reader's errors name the file and field, a round trip is exact, and the CLI's
// --save-plan / --plan-file write and read them through the real binary.
#include "core/demo/demodraft.h"
#include "core/io/ioerror.h"
#include "core/plan/planfile.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

using namespace spark;
namespace fs = std::filesystem;

class TestPlanFile : public QObject
{
    Q_OBJECT

  private:
    QTemporaryDir m_dir;
    fs::path m_draft;

    fs::path path(const std::string& name) const { return fs::path(m_dir.path().toStdString()) / name; }

  private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_draft = path("glm");
        writeDemoDraft(describeDemoDraft("glm-dspark", DemoScale::Tiny), m_draft.string(), {});
    }

    void roundTrip()
    {
        PlanOptions options;
        options.preset = "dspark";
        options.targets = {"re:.*mlp.*", "Linear"};
        options.ignore = {"lm_head", "re:.*markov.*"};
        options.schemes = {"re:.*down_proj=W8A16", "re:.*up_proj=BF16"};
        options.targetLayers = 32;
        options.bits = 8;
        options.groupSize = -1;
        options.tpDegree = 2;
        options.budget = PlanBudget{"drafter_ms", 123456789, 0.42, 0.0125, {"lm_head=2"}, {"W4A16", "W8A16"}};
        options.budget->acceptanceLoss = -0.0375; // a significant gain of expected acceptance
        options.budget->acceptanceLossKind = "expected-acceptance";
        options.budget->capture = "capture.safetensors";
        const auto file = path("all.json");
        writePlanFile(file, options);
        const auto back = readPlanFile(file);
        QCOMPARE(back.preset, options.preset);
        QVERIFY(back.targets == options.targets);
        QVERIFY(back.ignore == options.ignore);
        QVERIFY(back.schemes == options.schemes);
        QVERIFY(back.targetLayers == options.targetLayers);
        QCOMPARE(back.bits, 8);
        QCOMPARE(back.groupSize, -1);
        QCOMPARE(back.tpDegree, 2);
        QVERIFY(back.budget == options.budget);
        QVERIFY2((planFileJson(back)) == (planFileJson(options)), (planFileJson(back)).dump().c_str());
        const auto json = nlohmann::json::parse(test::readFile(file));
        QCOMPARE(json.at("format").get<std::string>(), std::string("sparkulator-plan"));
        QCOMPARE(json.at("version").get<int>(), kPlanFileVersion);
        QCOMPARE(json.at("default_scheme").get<std::string>(), std::string("W8A16:channel"));

        // Saving again replaces the file atomically and leaves no temporary beside it.
        options.targets.clear();
        writePlanFile(file, options);
        QVERIFY(readPlanFile(file).targets.empty());
        int entries = 0;
        for (const auto& e : fs::directory_iterator(file.parent_path())) {
            entries += e.path().filename().string().starts_with("all.json") ? 1 : 0;
        }
        QCOMPARE(entries, 1);
    }

    void defaultsForMissingFields()
    {
        const auto options = parsePlanFile(R"({"format": "sparkulator-plan", "version": 1})", "min.json");
        QCOMPARE(options.preset, std::string("auto"));
        QVERIFY(options.targets.empty());
        QVERIFY(!options.targetLayers);
        QCOMPARE(options.bits, 4);
        QCOMPARE(options.groupSize, 128);
        QCOMPARE(options.tpDegree, 1);
        // A budget record of the KL loss, as older files wrote it, still loads with its kind.
        const auto old = parsePlanFile(
            R"({"format": "sparkulator-plan", "version": 1, "budget": {"objective": "streamed_bytes",
                "budget_bytes": 1, "acceptance_kl": 0.25, "capture": "c.safetensors"}})",
            "old.json");
        QVERIFY(old.budget && old.budget->acceptanceLoss);
        QCOMPARE(*old.budget->acceptanceLoss, 0.25);
        QCOMPARE(old.budget->acceptanceLossKind, std::string("kl"));
    }

    void errorsNameFileAndField_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::addRow("bad json") << R"({"format": )"
                                  << "p.json: not valid JSON";
        QTest::addRow("duplicate key") << R"({"format": "sparkulator-plan", "format": "x", "version": 1})"
                                       << "p.json: not valid JSON";
        QTest::addRow("not an object") << "[1, 2]"
                                       << "p.json: expected a JSON object";
        QTest::addRow("no format") << R"({"version": 1})"
                                   << "p.json: field 'format'";
        QTest::addRow("other format") << R"({"format": "vllm", "version": 1})"
                                      << "p.json: field 'format'";
        QTest::addRow("no version") << R"({"format": "sparkulator-plan"})"
                                    << "p.json: field 'version': missing";
        QTest::addRow("unknown version") << R"({"format": "sparkulator-plan", "version": 2})"
                                         << "p.json: field 'version': unknown version 2";
        QTest::addRow("version type") << R"({"format": "sparkulator-plan", "version": "1"})"
                                      << "p.json: field 'version': expected an integer";
        QTest::addRow("targets type")
            << R"({"format": "sparkulator-plan", "version": 1, "targets": "lm_head"})"
            << "p.json: field 'targets': expected an array of strings";
        QTest::addRow("ignore item") << R"({"format": "sparkulator-plan", "version": 1, "ignore": ["a", 3]})"
                                     << "p.json: field 'ignore': item 1 is not a string";
        QTest::addRow("preset type") << R"({"format": "sparkulator-plan", "version": 1, "preset": 4})"
                                     << "p.json: field 'preset': expected a string";
        QTest::addRow("default scheme")
            << R"({"format": "sparkulator-plan", "version": 1, "default_scheme": "FP8_DYNAMIC"})"
            << "p.json: field 'default_scheme': 'FP8_DYNAMIC' is not an integer";
        QTest::addRow("layers range")
            << R"({"format": "sparkulator-plan", "version": 1, "target_layers": -3})"
            << "p.json: field 'target_layers': -3 is out of range";
        QTest::addRow("tp type") << R"({"format": "sparkulator-plan", "version": 1, "tp": 1.5})"
                                 << "p.json: field 'tp': expected an integer";
        QTest::addRow("budget objective")
            << R"({"format": "sparkulator-plan", "version": 1, "budget": {"objective": "speed", "budget_bytes": 1}})"
            << "p.json: field 'budget': 'objective' must be";
        QTest::addRow("budget ms missing")
            << R"({"format": "sparkulator-plan", "version": 1, "budget": {"objective": "drafter_ms", "budget_bytes": 1}})"
            << "p.json: field 'budget': objective drafter_ms needs 'budget_ms'";
        QTest::addRow("budget unknown key")
            << R"({"format": "sparkulator-plan", "version": 1, "budget": {"objective": "streamed_bytes", "budget_bytes": 1, "mu": 2}})"
            << "p.json: field 'budget': unknown field 'mu'";
        QTest::addRow("budget loss kind")
            << R"({"format": "sparkulator-plan", "version": 1, "budget": {"objective": "streamed_bytes", "budget_bytes": 1, "acceptance_loss": 0.5, "acceptance_loss_kind": "tau"}})"
            << "p.json: field 'budget': 'acceptance_loss' needs 'acceptance_loss_kind'";
        QTest::addRow("unknown key") << R"({"format": "sparkulator-plan", "version": 1, "targetz": []})"
                                     << "p.json: unknown field 'targetz'";
    }

    void errorsNameFileAndField()
    {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        try {
            parsePlanFile(text.toStdString(), "p.json");
            QFAIL("no error");
        } catch (const PlanFileError& e) {
            const QString message = QString::fromStdString(e.what());
            QVERIFY2(message.startsWith(expected), qPrintable(message));
        }
    }

    void missingFileNamed()
    {
        const auto file = path("nope/plan.json");
        try {
            readPlanFile(file);
            QFAIL("no error");
        } catch (const PlanFileError& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QString::fromStdString(file.string() + ": no such file"));
        }
    }

    void writeFailureNamesFile()
    {
        QVERIFY_THROWS_EXCEPTION(IoError, writePlanFile(path("missing-folder/plan.json"), PlanOptions{}));
    }

    // --save-plan writes the plan of the command line; --plan-file reads it back to the identical plan.
    void cliSavesAndReadsPlan()
    {
        const auto saved = path("cli-plan.json");
        const auto save = test::runCli({"plan", m_draft.string(), "--ignore", "re:.*markov.*", "--scheme",
                                        "re:.*down_proj=W8A16", "--target-layers", "40", "--group", "64",
                                        "--json", "--save-plan", saved.string()});
        QVERIFY2(save.exitCode == 0, save.err.c_str());
        QVERIFY(fs::exists(saved));
        const auto json = nlohmann::json::parse(test::readFile(saved));
        QVERIFY2((json.at("ignore")) == (nlohmann::json::array({"re:.*markov.*"})),
                 (json.at("ignore")).dump().c_str());
        QCOMPARE(json.at("default_scheme").get<std::string>(), std::string("W4A16:g64"));
        QCOMPARE(json.at("target_layers").get<int>(), 40);

        // Re-reading the file and saving again gives the identical plan file and the identical plan.
        const auto again = path("cli-plan-again.json");
        const auto reread = test::runCli({"plan", m_draft.string(), "--plan-file", saved.string(), "--json",
                                          "--save-plan", again.string()});
        QVERIFY2(reread.exitCode == 0, reread.err.c_str());
        QCOMPARE(test::readFile(again), test::readFile(saved));
        QVERIFY2((nlohmann::json::parse(reread.out)) == (nlohmann::json::parse(save.out)),
                 (nlohmann::json::parse(reread.out)).dump().c_str());

        // Options on the command line override single values and add entries after the file's.
        const auto merged = path("cli-plan-merged.json");
        const auto over =
            test::runCli({"plan", m_draft.string(), "--plan-file", saved.string(), "--target-layers", "12",
                          "--ignore", "lm_head", "--save-plan", merged.string()});
        QVERIFY2(over.exitCode == 0, over.err.c_str());
        const auto mergedJson = nlohmann::json::parse(test::readFile(merged));
        QCOMPARE(mergedJson.at("target_layers").get<int>(), 12);
        QVERIFY2((mergedJson.at("ignore")) == (nlohmann::json::array({"re:.*markov.*", "lm_head"})),
                 (mergedJson.at("ignore")).dump().c_str());
        QCOMPARE(mergedJson.at("default_scheme").get<std::string>(), std::string("W4A16:g64"));
    }

    // `plan --budget --save-plan` saves the allocation's rules with the budget as a record; the file gives
    // the same plan without a sweep, and a changed command line drops the record.
    void cliSavesBudgetPlan()
    {
        const auto saved = path("budget-plan.json");
        const auto run = test::runCli(
            {"plan", m_draft.string(), "--budget", "preset", "--json", "--save-plan", saved.string()});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        const auto fileJson = nlohmann::json::parse(test::readFile(saved));
        const auto budgetJson = nlohmann::json::parse(run.out);
        const auto& allocation = budgetJson.at("allocation");
        QCOMPARE(fileJson.at("budget").at("objective").get<std::string>(), std::string("streamed_bytes"));
        QCOMPARE(fileJson.at("budget").at("budget_bytes").get<std::uint64_t>(),
                 allocation.at("budget_bytes").get<std::uint64_t>());
        for (const auto& rule : allocation.at("rules")) {
            const auto& rules = fileJson.at("schemes");
            QVERIFY2(std::find(rules.begin(), rules.end(), rule) != rules.end(), rule.dump().c_str());
        }
        const auto reread = test::runCli({"plan", m_draft.string(), "--plan-file", saved.string(), "--json"});
        QVERIFY2(reread.exitCode == 0, reread.err.c_str());
        const auto rereadJson = nlohmann::json::parse(reread.out);
        QVERIFY(!rereadJson.contains("allocation"));
        QVERIFY2(rereadJson.at("budget_record") == fileJson.at("budget"), reread.out.c_str());
        std::map<std::string, std::string> before, after;
        for (const auto& m : budgetJson.at("modules")) {
            before[m.at("name").get<std::string>()] = m.at("scheme").get<std::string>();
        }
        for (const auto& m : rereadJson.at("modules")) {
            after[m.at("name").get<std::string>()] = m.at("scheme").get<std::string>();
        }
        QVERIFY(before == after);
        const auto changed = path("budget-plan-changed.json");
        const auto edit = test::runCli({"plan", m_draft.string(), "--plan-file", saved.string(), "--scheme",
                                        "re:.*down_proj=W8A16", "--save-plan", changed.string()});
        QVERIFY2(edit.exitCode == 0, edit.err.c_str());
        QVERIFY(!nlohmann::json::parse(test::readFile(changed)).contains("budget"));
    }

    void cliReportsBadPlanFile()
    {
        const auto bad = path("bad-plan.json");
        test::writeFile(bad, R"({"format": "sparkulator-plan", "version": 7})");
        const auto run = test::runCli({"plan", m_draft.string(), "--plan-file", bad.string()});
        QVERIFY(run.exitCode != 0);
        QVERIFY2(run.err.find(bad.string() + ": field 'version': unknown version 7") != std::string::npos,
                 run.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPlanFile)
#include "tst_planfile.moc"
