// The budget allocator's α from a per-unit acceptance sensitivity (core/plan/sensitivityalpha.h): the
// normalisation, the anchored rules, the sensitivity file and `plan --budget ... --alpha-from FILE`.
#include "core/demo/demodraft.h"
#include "core/plan/budgetallocator.h"
#include "core/plan/sensitivityalpha.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>

using namespace spark;

namespace {

SweepUnit unitNamed(const std::string& name, const std::string& leaf)
{
    SweepUnit u;
    u.name = name;
    u.leaf = leaf;
    return u;
}

std::string fileText(const nlohmann::json& units)
{
    return nlohmann::json{{"format", "sparkulator-sensitivity"}, {"version", 1}, {"units", units}}.dump();
}

} // namespace

class TestSensitivityAlpha : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void alphasNormaliseTheLosses_data();
    void alphasNormaliseTheLosses();
    void rulesAreAnchoredOnTheUnitName();
    void fileRoundTrip();
    void badFilesNameFileAndField_data();
    void badFilesNameFileAndField();
    void planReadsAlphaFrom();
};

void TestSensitivityAlpha::alphasNormaliseTheLosses_data()
{
    QTest::addColumn<std::vector<double>>("deltas");
    QTest::addColumn<std::vector<double>>("alphas");
    // Mean loss over the losing units 0.015: 0.02 → 4/3, 0.01 → 2/3; no loss → the 0.05 floor.
    QTest::addRow("mixed") << std::vector<double>{-0.02, -0.01, 0.0, 0.005}
                           << std::vector<double>{0.02 / 0.015, 0.01 / 0.015, 0.05, 0.05};
    QTest::addRow("one loser") << std::vector<double>{0.001, -0.3} << std::vector<double>{0.05, 1.0};
    // A loss far below the mean still weighs at least 0.05.
    QTest::addRow("floor") << std::vector<double>{-1.0, -0.001} << std::vector<double>{2.0 / 1.001, 0.05};
    // Nothing lost: nothing to rank, every unit weighs the same.
    QTest::addRow("no loss") << std::vector<double>{0.0, 0.01} << std::vector<double>{1.0, 1.0};
    QTest::addRow("empty") << std::vector<double>{} << std::vector<double>{};
}

void TestSensitivityAlpha::alphasNormaliseTheLosses()
{
    QFETCH(std::vector<double>, deltas);
    QFETCH(std::vector<double>, alphas);
    const auto got = alphasFromTauDeltas(deltas);
    QCOMPARE(got.size(), alphas.size());
    double losingSum = 0;
    int losing = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        QVERIFY2(std::abs(got[i] - alphas[i]) < 1e-12,
                 qPrintable(QStringLiteral("unit %1: %2, expected %3").arg(i).arg(got[i]).arg(alphas[i])));
        if (deltas[i] < 0 && got[i] > kMinSensitivityAlpha) {
            losingSum += got[i];
            ++losing;
        }
    }
    // Over the losing units above the floor the mean is 1 when none was floored (the "mixed" row).
    if (QByteArray(QTest::currentDataTag()) == "mixed") {
        QCOMPARE(losing, 2);
        QVERIFY(std::abs(losingSum / losing - 1.0) < 1e-12);
    }
}

void TestSensitivityAlpha::rulesAreAnchoredOnTheUnitName()
{
    const std::vector<UnitAcceptanceLoss> units{{"model.layers.1.mlp.down_proj", -0.03},
                                                {"model.layers.1.self_attn.qkv_proj", -0.01}};
    const auto rules = alphaRulesFromSensitivity(units);
    QCOMPARE(rules.size(), 2u);
    QCOMPARE(QString::fromStdString(rules[0]),
             QStringLiteral("re:^model\\.layers\\.1\\.mlp\\.down_proj$=1.5"));
    QCOMPARE(QString::fromStdString(rules[1]),
             QStringLiteral("re:^model\\.layers\\.1\\.self_attn\\.qkv_proj$=0.5"));

    // Through the allocator's own matcher: layer 1's rule must not reach layer 10 (anchored at the end) nor
    // a name that only ends the same way (anchored at the start).
    SweepResult sweep;
    sweep.units = {unitNamed("model.layers.1.mlp.down_proj", "down_proj"),
                   unitNamed("model.layers.10.mlp.down_proj", "down_proj"),
                   unitNamed("xmodel.layers.1.mlp.down_proj", "down_proj"),
                   unitNamed("model.layers.1.self_attn.qkv_proj", "qkv_proj")};
    const auto alphas = resolveAlphas(sweep, rules);
    QCOMPARE(alphas, (std::vector<double>{1.5, 1.0, 1.0, 0.5}));
}

void TestSensitivityAlpha::fileRoundTrip()
{
    const auto text =
        fileText({{{"unit", "model.layers.0.mlp.gate_up_proj"}, {"tau_delta", -0.0125}, {"scheme", "W4A16"}},
                  {{"unit", "model.fc"}, {"tau_delta", 0.002}}});
    const auto units = parseSensitivityFile(text, "s.json");
    QCOMPARE(units.size(), 2u);
    QCOMPARE(QString::fromStdString(units[0].unit), QStringLiteral("model.layers.0.mlp.gate_up_proj"));
    QCOMPARE(units[0].tauDelta, -0.0125);
    QCOMPARE(units[1].tauDelta, 0.002);
    // The rule's number reads back as the same double as the α it came from.
    const auto rules = alphaRulesFromSensitivity(units);
    const auto alphas = alphasFromTauDeltas({-0.0125, 0.002});
    for (std::size_t i = 0; i < rules.size(); ++i) {
        QCOMPARE(std::stod(rules[i].substr(rules[i].rfind('=') + 1)), alphas[i]);
    }
}

void TestSensitivityAlpha::badFilesNameFileAndField_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("field");
    QTest::addRow("not json") << QStringLiteral("{units: ") << QStringLiteral("not JSON");
    QTest::addRow("array") << QStringLiteral("[]") << QStringLiteral("JSON object");
    QTest::addRow("format") << QStringLiteral(R"({"format": "sparkulator-plan", "version": 1, "units": []})")
                            << QStringLiteral("'format'");
    QTest::addRow("version") << QStringLiteral(
                                    R"({"format": "sparkulator-sensitivity", "version": 2, "units": []})")
                             << QStringLiteral("'version'");
    QTest::addRow("no units") << QStringLiteral(R"({"format": "sparkulator-sensitivity", "version": 1})")
                              << QStringLiteral("'units'");
    QTest::addRow("empty units") << QString::fromStdString(fileText(nlohmann::json::array()))
                                 << QStringLiteral("'units'");
    QTest::addRow("unit name") << QString::fromStdString(
                                      fileText({{{"unit", "a"}, {"tau_delta", -0.1}}, {{"tau_delta", -0.1}}}))
                               << QStringLiteral("'units[1].unit'");
    QTest::addRow("tau text") << QString::fromStdString(fileText({{{"unit", "a"}, {"tau_delta", "-0.1"}}}))
                              << QStringLiteral("'units[0].tau_delta'");
    QTest::addRow("tau null") << QString::fromStdString(fileText({{{"unit", "a"}, {"tau_delta", nullptr}}}))
                              << QStringLiteral("'units[0].tau_delta'");
}

void TestSensitivityAlpha::badFilesNameFileAndField()
{
    QFETCH(QString, text);
    QFETCH(QString, field);
    try {
        parseSensitivityFile(text.toStdString(), "/tmp/sens.json");
        QFAIL("a malformed sensitivity file was accepted");
    } catch (const std::invalid_argument& e) {
        const QString message = QString::fromStdString(e.what());
        QVERIFY2(message.startsWith(QStringLiteral("/tmp/sens.json: ")), qPrintable(message));
        QVERIFY2(message.contains(field), qPrintable(message));
    }
}

void TestSensitivityAlpha::planReadsAlphaFrom()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::filesystem::path root = dir.path().toStdString();
    const auto draft = root / "draft";
    writeDemoDraft(describeDemoDraft("qwen3-dflash", DemoScale::Tiny), draft, {});
    const auto sweep = test::runCli({"sweep", draft.string(), "--json", "--threads", "2"});
    QCOMPARE(sweep.exitCode, 0);
    const auto units = nlohmann::json::parse(sweep.out)["units"];
    QVERIFY(units.size() >= 2);
    const auto first = units[0]["name"].get<std::string>();
    const auto second = units[1]["name"].get<std::string>();
    const auto file = root / "sensitivity.json";
    test::writeFile(
        file, fileText({{{"unit", first}, {"tau_delta", -0.03}}, {{"unit", second}, {"tau_delta", -0.01}}}));

    const auto plan = test::runCli({"plan", draft.string(), "--budget", "preset", "--alpha-from",
                                    file.string(), "--json", "--threads", "2"});
    QVERIFY2(plan.exitCode == 0, plan.err.c_str());
    const auto allocation = nlohmann::json::parse(plan.out)["allocation"];
    std::map<std::string, double> alphaOf;
    for (const auto& u : allocation["units"]) {
        alphaOf[u["name"].get<std::string>()] = u["alpha"].get<double>();
    }
    QCOMPARE(alphaOf.at(first), 1.5);
    QCOMPARE(alphaOf.at(second), 0.5);
    // A unit the file does not name keeps α 1.
    QCOMPARE(alphaOf.at(units[2]["name"].get<std::string>()), 1.0);

    const auto bad = root / "bad.json";
    test::writeFile(bad, fileText({{{"unit", first}, {"tau_delta", "lots"}}}));
    const auto failed =
        test::runCli({"plan", draft.string(), "--budget", "preset", "--alpha-from", bad.string()});
    QCOMPARE(failed.exitCode, 2);
    QVERIFY2(failed.err.find(bad.string()) != std::string::npos, failed.err.c_str());
    QVERIFY2(failed.err.find("units[0].tau_delta") != std::string::npos, failed.err.c_str());
    // Without a budget the option means nothing: a usage error, not silence.
    const auto noBudget = test::runCli({"plan", draft.string(), "--alpha-from", file.string()});
    QCOMPARE(noBudget.exitCode, 2);
}

QTEST_GUILESS_MAIN(TestSensitivityAlpha)
#include "tst_sensitivityalpha.moc"
