// The CLI reference: docs/cli.md is exactly what `sparkulator-cli help --markdown` prints, every command's
// --help lists every option of its table, and the deprecated spellings of --target-model still work.
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

using namespace spark;
namespace fs = std::filesystem;

namespace {

fs::path docsCliMd()
{
    return fs::path(SPARK_TEST_DATA) / ".." / ".." / "docs" / "cli.md";
}

/// Every command of the Markdown reference with the options its table lists, in order.
std::map<std::string, std::vector<std::string>> optionsByCommand(const std::string& markdown)
{
    static const std::regex section("^## (\\S+)$");
    static const std::regex row("^\\| `--([a-z0-9-]+)` \\|");
    std::map<std::string, std::vector<std::string>> commands;
    std::string current;
    std::istringstream lines(markdown);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_match(line, m, section)) {
            current = m[1];
            commands[current];
        } else if (!current.empty() && std::regex_search(line, m, row)) {
            commands[current].push_back(m[1]);
        }
    }
    return commands;
}

/// The options `COMMAND --help` lists: the lines "  --name ..." after "options:".
std::vector<std::string> optionsInHelp(const std::string& help)
{
    static const std::regex line("^  --([a-z0-9-]+)(?: |$)");
    std::vector<std::string> names;
    std::istringstream lines(help);
    for (std::string text; std::getline(lines, text);) {
        std::smatch m;
        if (std::regex_search(text, m, line)) {
            names.push_back(m[1]);
        }
    }
    return names;
}

std::size_t occurrences(const std::string& text, const std::string& what)
{
    std::size_t count = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++count;
    }
    return count;
}

} // namespace

class TestCliReference : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void docsAreTheGeneratedReference();
    void helpListsEveryOption();
    void usageErrorPointsToHelp();
    void acceptanceTargetModel();
    void acceptanceTargetIsAPlanEntry();
    void quantizeTargetCheckpointAlias();
    void cardNamesTheTargetFolder();
    void perfTargetAlias();
};

void TestCliReference::docsAreTheGeneratedReference()
{
    const auto generated = test::runCli({"help", "--markdown"});
    QCOMPARE(generated.exitCode, 0);
    QVERIFY(generated.out.rfind("<!-- ", 0) == 0);
    QVERIFY2(fs::exists(docsCliMd()), docsCliMd().c_str());
    const auto docs = test::readFile(docsCliMd());
    if (docs != generated.out) {
        std::size_t line = 1;
        for (std::size_t i = 0;
             i < std::min(docs.size(), generated.out.size()) && docs[i] == generated.out[i]; ++i) {
            line += docs[i] == '\n';
        }
        const auto message = "docs/cli.md differs from `sparkulator-cli help --markdown` from line " +
                             std::to_string(line) +
                             ": it is generated, regenerate it with "
                             "`build/dev/app/cli/sparkulator-cli help --markdown > docs/cli.md`";
        QFAIL(message.c_str());
    }
}

void TestCliReference::helpListsEveryOption()
{
    const auto markdown = test::runCli({"help", "--markdown"}).out;
    const auto commands = optionsByCommand(markdown);
    // Every command of the overview has a section (match has no option; every other command has some).
    const auto overview = test::runCli({"--help"}).out;
    static const std::regex listed("^  ([a-z]+) +\\S");
    std::size_t listedCount = 0;
    std::istringstream lines(overview);
    for (std::string line; std::getline(lines, line);) {
        if (std::smatch m; std::regex_search(line, m, listed)) {
            QVERIFY2(commands.count(m[1]), m[1].str().c_str());
            ++listedCount;
        }
    }
    QCOMPARE(listedCount, commands.size());
    QVERIFY(commands.size() >= 15);
    QVERIFY(commands.at("match").empty());
    QVERIFY(commands.at("plan").size() > 30);

    for (const auto& [command, options] : commands) {
        const auto help = test::runCli({command, "--help"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY2(help.out.find("usage: sparkulator-cli " + command) != std::string::npos, help.out.c_str());
        const std::set<std::string> unique(options.begin(), options.end());
        QVERIFY2(unique.size() == options.size(), ("an option listed twice in " + command).c_str());
        QVERIFY2(optionsInHelp(help.out) == options, (command + " --help:\n" + help.out).c_str());
        // `help COMMAND` says the same.
        QCOMPARE(test::runCli({"help", command}).out, help.out);
    }
    // Notes that only the old usage strings carried survive in the help texts.
    const auto plan = test::runCli({"plan", "--help"}).out;
    QVERIFY(plan.find("excludes --budget-file and --budget-ms") != std::string::npos);
    QVERIFY(plan.find("excludes --bandwidth-gbps") != std::string::npos);
    QVERIFY(
        test::runCli({"quantize", "--help"}).out.find("that GPTQ and the hessian rounding calibrate on") !=
        std::string::npos);
}

void TestCliReference::usageErrorPointsToHelp()
{
    const auto r = test::runCli({"verify", "--bogus"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.find("unknown option --bogus\nusage: sparkulator-cli verify SRC OUT [options]\n"
                        "see sparkulator-cli verify --help\n") != std::string::npos,
             r.err.c_str());
}

void TestCliReference::acceptanceTargetModel()
{
    const auto trained = test::dataPath("trained");
    const std::vector<std::string> base{"acceptance",
                                        (trained / "eagle3").string(),
                                        "--hidden-states",
                                        (trained / "capture-hs").string(),
                                        "--anchors",
                                        "8",
                                        "--k",
                                        "1",
                                        "--bf16-only",
                                        "--json"};
    auto current = base;
    current.insert(current.end(), {"--target-model", (trained / "target").string()});
    auto old = base;
    old.insert(old.end(), {"--target", (trained / "target").string()});
    const auto a = test::runCli(current);
    const auto b = test::runCli(old);
    QVERIFY2(a.exitCode == 0, a.err.c_str());
    QVERIFY2(b.exitCode == 0, b.err.c_str());
    QCOMPARE(a.out, b.out);
    QVERIFY2(a.err.find("deprecated") == std::string::npos, a.err.c_str());
    QCOMPARE(occurrences(b.err, "is deprecated, use --target-model\n"), std::size_t{1});
    // Both at once name the target model twice.
    current.insert(current.end(), {"--target", (trained / "target").string()});
    QCOMPARE(test::runCli(current).exitCode, 2);
}

void TestCliReference::acceptanceTargetIsAPlanEntry()
{
    // As in every planning command, --target adds a target entry: with the preset none, nothing is quantized
    // without it and every Linear with it.
    const auto trained = test::dataPath("trained");
    const auto meanKl = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args{"acceptance",
                                      (trained / "eagle3").string(),
                                      "--hidden-states",
                                      (trained / "capture-hs").string(),
                                      "--target-model",
                                      (trained / "target").string(),
                                      "--anchors",
                                      "16",
                                      "--k",
                                      "1",
                                      "--preset",
                                      "none",
                                      "--json"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = test::runCli(args);
        if (r.exitCode != 0) {
            throw std::runtime_error(r.err);
        }
        return nlohmann::json::parse(r.out).at("positions").at(0).at("mean_kl").get<double>();
    };
    QCOMPARE(meanKl({}), 0.0);
    QVERIFY(meanKl({"--target", "Linear"}) > 0);
    // A plan entry, so it excludes --quantized like the other plan options.
    const auto r = test::runCli({"acceptance", (trained / "eagle3").string(), "--hidden-states",
                                 (trained / "capture-hs").string(), "--quantized", "/nonexistent", "--target",
                                 "Linear"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.find("--quantized and plan options exclude each other") != std::string::npos,
             r.err.c_str());
}

void TestCliReference::quantizeTargetCheckpointAlias()
{
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    test::writeFile(root / "target" / "config.json", R"({"_name_or_path": "example-org/Target-7B"})");
    const auto out = root / "out";
    const auto r = test::runCli({"quantize", test::dataPath("trained/eagle3").string(), "--out", out.string(),
                                 "--no-verify", "--target-checkpoint", (root / "target").string()});
    QVERIFY2(r.exitCode == 0, r.err.c_str());
    QCOMPARE(occurrences(r.err, "--target-checkpoint is deprecated, use --target-model\n"), std::size_t{1});
    // The folder is the target model: the card names what its config says it is.
    QVERIFY(test::readFile(out / "README.md").find("example-org/Target-7B") != std::string::npos);
}

void TestCliReference::cardNamesTheTargetFolder()
{
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    test::writeFile(root / "named" / "config.json", R"({"_name_or_path": "example-org/Target-7B"})");
    test::writeFile(root / "unnamed" / "config.json", "{}");
    const auto draft = test::dataPath("trained/eagle3").string();
    const auto card = [&](const std::string& target) {
        const auto r = test::runCli({"card", draft, "--target-model", target});
        if (r.exitCode != 0 || r.err.find("deprecated") != std::string::npos) {
            throw std::runtime_error(r.err);
        }
        return r.out;
    };
    QVERIFY(card((root / "named").string()).find("| target (verifier) | example-org/Target-7B |") !=
            std::string::npos);
    QVERIFY(card((root / "unnamed").string()).find("| target (verifier) | " + (root / "unnamed").string()) !=
            std::string::npos);
    QVERIFY(card("zai-org/GLM-5.2").find("| target (verifier) | zai-org/GLM-5.2 |") != std::string::npos);
}

void TestCliReference::perfTargetAlias()
{
    // Parsed (with its notice) before perf checks its values: --size 0 stops it before any work.
    const auto r = test::runCli({"perf", "--forward", "draft", "--target", "target", "--size", "0"});
    QCOMPARE(r.exitCode, 2);
    QCOMPARE(occurrences(r.err, "--target is deprecated, use --target-model\n"), std::size_t{1});
}

QTEST_GUILESS_MAIN(TestCliReference)
#include "tst_cli_reference.moc"
