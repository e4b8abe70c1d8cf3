// Rounding as a per-module choice (issue #24 part 1, product side): rules and the default through the
// planner, plan files and the CLI; a mixed rtn/mse/range export written, re-read and recomputed bit for bit
// by verify, compare and check; the config records each group's observer.
#include "core/audit/checker.h"
#include "core/audit/comparer.h"
#include "core/demo/demodraft.h"
#include "core/export/exporter.h"
#include "core/export/verifier.h"
#include "core/io/checkpoint.h"
#include "core/plan/configreader.h"
#include "core/plan/planfile.h"
#include "core/plan/quantplan.h"
#include "core/quant/quantbackend.h"
#include "core/quant/roundingsearch.h"
#include "core/quant/schemecodec.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <map>
#include <set>

using namespace spark;
using namespace spark::test;
namespace fs = std::filesystem;

namespace {

/// EAGLE-3: NVFP4 on the fused gate/up (mse, so the set's global scale comes from shrunk statistics),
/// W4A16_ASYM on fc (range, whose asymmetric ends are searched independently), o_proj kept rtn by a later
/// rule, down_proj the preset's W4A16 under the mse default: W4A16 in two groups (mse and rtn).
PlanOptions mixedOptions()
{
    PlanOptions options;
    options.schemes = {"re:.*\\.fc$=W4A16_ASYM", "re:.*\\.(gate_up|gate|up)_proj$=NVFP4A16"};
    options.rounding = "mse";
    options.roundings = {"re:.*o_proj$=range", "re:.*\\.fc$=range", "re:.*o_proj$=rtn"};
    return options;
}

fs::path writeDraft(const QTemporaryDir& dir)
{
    const fs::path src = fs::path(dir.path().toStdString()) / "src";
    writeDemoDraft(describeDemoDraft("llama-eagle3", DemoScale::Tiny), src, {});
    return src;
}

const PlannedModule* firstModule(const QuantPlan& plan, const std::string& leaf)
{
    for (const auto& m : plan.modules) {
        if (m.decision == PlanDecision::Quantize && m.name.ends_with(leaf)) {
            return &m;
        }
    }
    return nullptr;
}

std::string problemsText(const VerifyReport& report)
{
    std::string text;
    for (const auto& p : report.problems) {
        text += p.subject + ": " + p.message + "\n";
    }
    return text;
}

} // namespace

class TestRoundingExport : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void planResolvesRulesPerUnit();
    void groupsPerSchemeAndRounding();
    void mixedExportVerifiesBitExact();
    void verifyReadsTheObserver();
    void codesOnNvfp4Only();
    void planFileRoundTrip();
    void planFileRejectsUnknownRounding();
    void badRoundingRules();
    void cliLaterRuleWins();
    void cliQuantizeThenCheck();
    void analyzeUnderSearchedScales();
};

void TestRoundingExport::planResolvesRulesPerUnit()
{
    QTemporaryDir dir;
    const auto source = Checkpoint::open(writeDraft(dir));
    const auto plan = makePlan(source.config(), infosOf(source), mixedOptions());
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    QCOMPARE(plan.defaultRounding->name, std::string_view("mse"));
    std::size_t checked = 0;
    for (const auto& m : plan.modules) {
        if (m.decision != PlanDecision::Quantize) {
            QCOMPARE(m.rounding, &rtnRounding()); // BF16 modules have nothing to round
            continue;
        }
        const std::string_view expected = m.name.ends_with("o_proj") ? "rtn"   // the later rule wins
                                          : m.name == "fc"           ? "range" // a rule
                                                                     : "mse";            // the default
        QVERIFY2(m.rounding->name == expected, (m.name + " " + std::string(m.rounding->name)).c_str());
        if (expected != "rtn") {
            QVERIFY2(m.reason.find(std::string(expected) + " rounding") != std::string::npos,
                     m.reason.c_str());
        }
        ++checked;
    }
    QVERIFY(checked >= 4);
    // Fused shards share one rounding (the unit is the vLLM layer).
    std::map<std::string, const RoundingMethod*> byLayer;
    for (const auto* m : plan.quantizedModules()) {
        const auto [it, fresh] = byLayer.emplace(m->vllmName, m->rounding);
        QVERIFY2(fresh || it->second == m->rounding, m->name.c_str());
    }
    // Rounding is orthogonal to the scheme: decisions and sizes equal the rtn plan's.
    auto rtnOptions = mixedOptions();
    rtnOptions.rounding = "rtn";
    rtnOptions.roundings.clear();
    const auto rtn = makePlan(source.config(), infosOf(source), rtnOptions);
    QCOMPARE(rtn.sizes.bytesAfter, plan.sizes.bytesAfter);
    QCOMPARE(rtn.quantizedModules().size(), plan.quantizedModules().size());
}

void TestRoundingExport::groupsPerSchemeAndRounding()
{
    QTemporaryDir dir;
    const auto source = Checkpoint::open(writeDraft(dir));
    const auto plan = makePlan(source.config(), infosOf(source), mixedOptions());
    QVERIFY(!plan.hasLint("config-groups-selfcheck"));
    // One group per distinct (scheme, rounding) pair of the quantized units.
    std::set<std::pair<const WeightScheme*, const RoundingMethod*>> pairs;
    for (const auto* m : plan.quantizedModules()) {
        pairs.insert({m->scheme, m->rounding});
    }
    QCOMPARE(plan.groups.size(), pairs.size());
    for (const auto* m : plan.quantizedModules()) {
        const int g = selectConfigGroup(plan.groups, m->vllmName, m->vllmClass, {});
        QVERIFY2(g >= 0, m->name.c_str());
        QCOMPARE(plan.groups[static_cast<std::size_t>(g)].scheme, m->scheme);
        QCOMPARE(plan.groups[static_cast<std::size_t>(g)].rounding, m->rounding);
    }
    // W4A16 appears twice (mse elsewhere, rtn on o_proj) but schemesUsed() lists it once.
    const auto schemes = plan.schemesUsed();
    QCOMPARE(std::set<const WeightScheme*>(schemes.begin(), schemes.end()).size(), schemes.size());
    QVERIFY(plan.groups.size() > schemes.size());
}

void TestRoundingExport::mixedExportVerifiesBitExact()
{
    QTemporaryDir dir;
    const auto src = writeDraft(dir);
    const auto source = Checkpoint::open(src);
    const auto plan = makePlan(source.config(), infosOf(source), mixedOptions());
    const fs::path out = fs::path(dir.path().toStdString()) / "out";
    exportCheckpoint(source, plan, {out});
    const auto written = Checkpoint::open(out);

    const auto report = verifyExport(source, written);
    QVERIFY2(report.ok(), problemsText(report).c_str());
    QCOMPARE(report.bitExactModules, plan.quantizedModules().size());

    // Re-read: every group records its observer, and vLLM's selection gives each module its rounding.
    const auto config = readQuantizationConfig(written.config());
    QVERIFY(config.problems.empty());
    const auto& groups = written.config()["quantization_config"]["config_groups"];
    std::set<std::string> observers;
    for (std::size_t g = 0; g < config.groups.size(); ++g) {
        const auto& weights = groups[config.groupNames[g]]["weights"];
        QVERIFY(config.groups[g].rounding != nullptr);
        QCOMPARE(weights["observer"].get<std::string>(), std::string(config.groups[g].rounding->observer));
        if (config.groups[g].rounding->name == "range") {
            QCOMPARE(weights["observer_kwargs"]["sparkulator_rounding"].get<std::string>(),
                     std::string("range"));
        } else {
            QVERIFY(weights["observer_kwargs"].empty());
        }
        observers.insert(weights["observer"].get<std::string>());
    }
    QCOMPARE(observers, (std::set<std::string>{"minmax", "memoryless_mse"}));
    for (const auto* m : plan.quantizedModules()) {
        const int g = selectConfigGroup(config.groups, m->vllmName, m->vllmClass, standardFusedMapping());
        QVERIFY2(g >= 0 && config.groups[static_cast<std::size_t>(g)].rounding == m->rounding,
                 m->name.c_str());
    }

    // The rounding really changed the bytes: an mse module's scales differ from an rtn export's, the rtn
    // o_proj is identical; and an in-memory search + encode (no exporter, no streaming) gives the mse bytes.
    auto rtnOptions = mixedOptions();
    rtnOptions.rounding = "rtn";
    rtnOptions.roundings.clear();
    const fs::path rtnOut = fs::path(dir.path().toStdString()) / "rtn";
    exportCheckpoint(source, makePlan(source.config(), infosOf(source), rtnOptions), {rtnOut});
    const auto rtnWritten = Checkpoint::open(rtnOut);
    auto scalesOf = [](const Checkpoint& c, const std::string& module) {
        const auto* t = c.find(module + ".weight_scale");
        const auto bytes = c.bytes(*t);
        return std::vector<std::byte>(bytes.begin(), bytes.end());
    };
    const auto* oProj = firstModule(plan, "o_proj");
    const auto* down = firstModule(plan, "down_proj");
    const auto* fc = plan.findModule("fc");
    QVERIFY(oProj && down && fc);
    QCOMPARE(scalesOf(written, oProj->name), scalesOf(rtnWritten, oProj->name));
    QVERIFY(scalesOf(written, down->name) != scalesOf(rtnWritten, down->name));
    QVERIFY(scalesOf(written, fc->name) != scalesOf(rtnWritten, fc->name));
    // The fused gate/up share one NVFP4 global scale, from their shrunk statistics.
    const auto* gate = firstModule(plan, "gate_proj");
    const auto* up = firstModule(plan, "up_proj");
    QVERIFY(gate && up && gate->vllmName == up->vllmName && gate->scheme->family == SchemeFamily::Nvfp4);
    const auto globalOf = [&](const std::string& module) {
        const auto bytes = written.bytes(*written.find(module + ".weight_global_scale"));
        return std::vector<std::byte>(bytes.begin(), bytes.end());
    };
    QCOMPARE(globalOf(gate->name), globalOf(up->name));

    const auto* weight = source.find(down->weightTensor);
    const auto data = source.bytes(*weight);
    const WeightRows rows{weight->info.dtype,
                          data.data(),
                          static_cast<std::size_t>(weight->info.shape[0]),
                          static_cast<std::size_t>(weight->info.shape[1]),
                          0,
                          weight->info.name};
    SchemeContext context;
    context.ranges = searchRanges(*down->rounding, *down->scheme, rows);
    const auto cpu = makeBackend(Backend::Cpu);
    const auto parts = encodeWeight(*down->scheme->codec(), rows, context, *cpu);
    const auto tensors =
        down->scheme->codec()->tensors(weight->info.shape[0], weight->info.shape[1], weight->info.dtype);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const auto* t = written.find(down->name + "." + tensors[i].suffix);
        QVERIFY(t);
        const auto bytes = written.bytes(*t);
        QVERIFY2(std::equal(bytes.begin(), bytes.end(), parts[i].begin(), parts[i].end()),
                 tensors[i].suffix.c_str());
    }

    // compare recomputes each method and reports it; check (no source) loads the config as vLLM does.
    const auto comparison = compareCheckpoints(source, written);
    QVERIFY2(comparison.ok(), comparison.summary().c_str());
    QCOMPARE(comparison.bitExactModules(), plan.quantizedModules().size());
    for (const auto& c : comparison.modules) {
        if (const auto* m = plan.findModule(c.module); m && m->decision == PlanDecision::Quantize) {
            QCOMPARE(c.rounding, std::string(m->rounding->name));
        }
    }
    const auto checked = checkCheckpoint(written);
    QVERIFY2(checked.ok(), checked.summary().c_str());
    QVERIFY(checked.has("weights-observer"));
}

void TestRoundingExport::verifyReadsTheObserver()
{
    // verify and compare take the method from the config: relabelling the mse group as minmax (rtn) makes
    // the recomputation differ, and an observer Sparkulator does not know is a verify problem.
    QTemporaryDir dir;
    const auto src = writeDraft(dir);
    const auto source = Checkpoint::open(src);
    const auto plan = makePlan(source.config(), infosOf(source), mixedOptions());
    const fs::path out = fs::path(dir.path().toStdString()) / "out";
    exportCheckpoint(source, plan, {out});
    auto relabel = [&](const std::string& observer, const std::string& name) {
        const fs::path copy = fs::path(dir.path().toStdString()) / name;
        fs::copy(out, copy, fs::copy_options::recursive);
        auto config = nlohmann::json::parse(readFile(copy / "config.json"));
        for (auto& [key, group] : config["quantization_config"]["config_groups"].items()) {
            if (group["weights"]["observer"] == "memoryless_mse") {
                group["weights"]["observer"] = observer;
            }
        }
        writeFile(copy / "config.json", config.dump(2));
        return copy;
    };
    const auto asRtn = Checkpoint::open(relabel("minmax", "as-rtn"));
    const auto report = verifyExport(source, asRtn);
    QVERIFY(!report.ok());
    QVERIFY2(problemsText(report).find("rtn rounding") != std::string::npos, problemsText(report).c_str());
    const auto comparison = compareCheckpoints(source, asRtn);
    QVERIFY(!comparison.ok());

    const auto unknown = Checkpoint::open(relabel("imatrix_mse", "unknown"));
    const auto unknownReport = verifyExport(source, unknown);
    QVERIFY(!unknownReport.ok());
    QVERIFY2(problemsText(unknownReport).find("no rounding method") != std::string::npos,
             problemsText(unknownReport).c_str());
    const auto unknownComparison = compareCheckpoints(source, unknown);
    QVERIFY(unknownComparison.ok()); // not checkable, not wrong
    QVERIFY(unknownComparison.bitExactModules() < plan.quantizedModules().size());
    QVERIFY(checkCheckpoint(unknown).ok()); // vLLM ignores the observer
}

void TestRoundingExport::codesOnNvfp4Only()
{
    // codes as the default: the NVFP4 units take it, the W4A16 ones keep rtn (one lint finding); the export
    // verifies bit for bit, and relabelled as rtn it does not (verify recomputes the scale-code search).
    QTemporaryDir dir;
    const auto src = writeDraft(dir);
    const auto source = Checkpoint::open(src);
    PlanOptions options;
    options.schemes = {"re:.*\\.(gate_up|gate|up)_proj$=NVFP4A16"};
    options.rounding = "codes";
    const auto plan = makePlan(source.config(), infosOf(source), options);
    QVERIFY(plan.errors.empty());
    std::size_t nvfp4 = 0;
    for (const auto* m : plan.quantizedModules()) {
        const bool fp4 = m->scheme->family == SchemeFamily::Nvfp4;
        QCOMPARE(m->rounding->name, std::string_view(fp4 ? "codes" : "rtn"));
        nvfp4 += fp4;
    }
    QVERIFY(nvfp4 > 0 && nvfp4 < plan.quantizedModules().size());
    QCOMPARE(std::count_if(plan.lint.begin(), plan.lint.end(),
                           [](const LintFinding& f) { return f.id == "rounding-not-applicable"; }),
             std::ptrdiff_t{1});

    const fs::path out = fs::path(dir.path().toStdString()) / "out";
    exportCheckpoint(source, plan, {out});
    const auto written = Checkpoint::open(out);
    const auto report = verifyExport(source, written);
    QVERIFY2(report.ok(), problemsText(report).c_str());
    QCOMPARE(report.bitExactModules, plan.quantizedModules().size());
    QVERIFY(compareCheckpoints(source, written).ok());
    QVERIFY(checkCheckpoint(written).ok());

    const fs::path copy = fs::path(dir.path().toStdString()) / "as-rtn";
    fs::copy(out, copy, fs::copy_options::recursive);
    auto config = nlohmann::json::parse(readFile(copy / "config.json"));
    int relabelled = 0;
    for (auto& [key, group] : config["quantization_config"]["config_groups"].items()) {
        auto& kwargs = group["weights"]["observer_kwargs"];
        if (kwargs.is_object() && kwargs.contains("sparkulator_rounding")) {
            QCOMPARE(kwargs["sparkulator_rounding"].get<std::string>(), std::string("codes"));
            kwargs.erase("sparkulator_rounding");
            ++relabelled;
        }
    }
    QCOMPARE(relabelled, 1);
    writeFile(copy / "config.json", config.dump(2));
    QVERIFY(!verifyExport(source, Checkpoint::open(copy)).ok());
}

void TestRoundingExport::planFileRoundTrip()
{
    auto options = mixedOptions();
    options.preset = "laguna-dflash";
    const auto json = planFileJson(options);
    QCOMPARE(json.at("rounding").get<std::string>(), std::string("mse"));
    QCOMPARE(json.at("roundings").get<std::vector<std::string>>(), options.roundings);
    const auto back = parsePlanFile(json.dump(2), "plan.json");
    QCOMPARE(back.rounding, options.rounding);
    QCOMPARE(back.roundings, options.roundings);
    QVERIFY2(planFileJson(back) == json, planFileJson(back).dump().c_str());
    // Left out: the rtn default and no rules.
    const auto minimal = parsePlanFile(R"({"format": "sparkulator-plan", "version": 1})", "plan.json");
    QCOMPARE(minimal.rounding, std::string("rtn"));
    QVERIFY(minimal.roundings.empty());
    // Case-insensitive on reading, canonical on writing.
    const auto upper =
        parsePlanFile(R"({"format": "sparkulator-plan", "version": 1, "rounding": "RANGE"})", "plan.json");
    QCOMPARE(upper.rounding, std::string("range"));
}

void TestRoundingExport::planFileRejectsUnknownRounding()
{
    for (const char* text : {R"({"format": "sparkulator-plan", "version": 1, "rounding": "gptq"})",
                             R"({"format": "sparkulator-plan", "version": 1, "rounding": 3})",
                             R"({"format": "sparkulator-plan", "version": 1, "roundings": "re:.*=mse"})"}) {
        try {
            parsePlanFile(text, "my.plan.json");
            QFAIL(text);
        } catch (const PlanFileError& e) {
            const std::string what = e.what();
            QVERIFY2(what.find("my.plan.json") != std::string::npos &&
                         what.find("round") != std::string::npos,
                     what.c_str());
        }
    }
}

void TestRoundingExport::badRoundingRules()
{
    QTemporaryDir dir;
    const auto source = Checkpoint::open(writeDraft(dir));
    auto planWith = [&](std::vector<std::string> rules, std::string rounding = "rtn") {
        PlanOptions options;
        options.roundings = std::move(rules);
        options.rounding = std::move(rounding);
        return makePlan(source.config(), infosOf(source), options);
    };
    QVERIFY(planWith({"re:.*=gptq"}).hasLint("invalid-rounding-rule"));
    QVERIFY(planWith({"mse"}).hasLint("invalid-rounding-rule"));
    QVERIFY(planWith({"=mse"}).hasLint("invalid-rounding-rule"));
    QVERIFY(!planWith({"re:.*=gptq"}).errors.empty());
    QVERIFY(planWith({"re:(=mse"}).hasLint("invalid-entry"));
    QVERIFY(planWith({"layers.0.mlp.nothing_proj=mse"}).hasLint("rounding-unmatched"));
    QVERIFY(planWith({}, "nearest").hasLint("invalid-rounding"));
    QVERIFY(planWith({"re:.*=MSE"}).errors.empty());
}

void TestRoundingExport::cliLaterRuleWins()
{
    QTemporaryDir dir;
    const auto src = writeDraft(dir);
    const fs::path planFile = fs::path(dir.path().toStdString()) / "p.json";
    // The file's rule says range for o_proj; the command line adds rtn for it (later wins) and sets the
    // default twice (the last one wins).
    PlanOptions fileOptions;
    fileOptions.roundings = {"re:.*o_proj$=range", "re:.*down_proj$=range"};
    fileOptions.rounding = "mse";
    writePlanFile(planFile, fileOptions);
    const auto run = runCli({"plan", src.string(), "--json", "--plan-file", planFile.string(), "--rounding",
                             "re:.*o_proj$=rtn", "--rounding", "mse", "--rounding", "range"});
    QVERIFY2(run.exitCode == 0, run.err.c_str());
    const auto json = nlohmann::json::parse(run.out);
    QCOMPARE(json["rounding"].get<std::string>(), std::string("range"));
    std::size_t seen = 0;
    for (const auto& m : json["modules"]) {
        if (m["decision"] != "quantize") {
            continue;
        }
        const auto name = m["name"].get<std::string>();
        const std::string expected = name.ends_with("o_proj") ? "rtn" : "range";
        QVERIFY2(m["rounding"] == expected, (name + " " + m["rounding"].dump()).c_str());
        ++seen;
    }
    QVERIFY(seen > 0);
    bool observerShown = false;
    for (const auto& g : json["config_groups"]) {
        observerShown = observerShown || g.contains("observer");
    }
    QVERIFY(observerShown);
    // A bad method is a usage error naming the option.
    const auto bad = runCli({"plan", src.string(), "--rounding", "nearest"});
    QVERIFY(bad.exitCode != 0);
    QVERIFY2(bad.err.find("--rounding") != std::string::npos, bad.err.c_str());
}

void TestRoundingExport::cliQuantizeThenCheck()
{
    QTemporaryDir dir;
    const auto src = writeDraft(dir);
    const auto out = fs::path(dir.path().toStdString()) / "q";
    const auto run = runCli({"quantize", src.string(), "--out", out.string(), "--backend", "cpu",
                             "--rounding", "mse", "--rounding", "re:.*o_proj$=range", "--scheme",
                             "re:.*\\.fc$=W4A16_ASYM", "--rounding", "re:.*\\.fc$=range"});
    QVERIFY2(run.exitCode == 0, (run.out + run.err).c_str());
    QVERIFY2(run.out.find("0 problems") != std::string::npos, run.out.c_str());
    QVERIFY2(run.out.find("mse + range rounding") != std::string::npos, run.out.c_str());
    const auto card = readFile(out / "README.md");
    QVERIFY2(card.find("memoryless_mse") != std::string::npos, card.c_str());
    QVERIFY2(card.find("Sparkulator-defined") != std::string::npos, card.c_str());
    const auto check = runCli({"check", out.string()});
    QVERIFY2(check.exitCode == 0, (check.out + check.err).c_str());
    const auto compare = runCli({"compare", src.string(), out.string()});
    QVERIFY2(compare.exitCode == 0, (compare.out + compare.err).c_str());
}

void TestRoundingExport::analyzeUnderSearchedScales()
{
    // range minimises each group's L2 error with p = 1 (rtn) among its candidates, so a tensor's squared
    // error under it cannot exceed rtn's; on Gaussian demo weights it is strictly lower.
    QTemporaryDir dir;
    const auto src = writeDraft(dir);
    auto analyze = [&](const std::string& rounding) {
        const auto run =
            runCli({"analyze", src.string(), "--json", "--backend", "cpu", "--rounding", rounding});
        if (run.exitCode != 0) {
            qWarning("analyze --rounding %s: exit %d: %s", rounding.c_str(), run.exitCode, run.err.c_str());
            return std::map<std::string, double>{};
        }
        std::map<std::string, double> sqErr;
        const auto json = nlohmann::json::parse(run.out);
        for (const auto& t : json["tensors"]) {
            if (t["rounding"] != rounding) {
                qWarning("%s: rounding %s", t["name"].get<std::string>().c_str(),
                         t["rounding"].dump().c_str());
                return std::map<std::string, double>{};
            }
            sqErr[t["name"].get<std::string>()] = t["sq_err"].get<double>();
        }
        return sqErr;
    };
    const auto rtn = analyze("rtn");
    const auto range = analyze("range");
    QVERIFY(!rtn.empty());
    QCOMPARE(range.size(), rtn.size());
    double rtnTotal = 0, rangeTotal = 0;
    for (const auto& [name, err] : rtn) {
        // Per element the search sums f32 squares, analyze f64 ones: allow their rounding difference.
        QVERIFY2(range.at(name) <= err * (1 + 1e-6), name.c_str());
        rtnTotal += err;
        rangeTotal += range.at(name);
    }
    QVERIFY2(rangeTotal < 0.97 * rtnTotal, qPrintable(QString::number(rangeTotal / rtnTotal)));
}

QTEST_GUILESS_MAIN(TestRoundingExport)
#include "tst_roundingexport.moc"
