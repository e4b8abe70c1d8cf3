// The sensitivity sweep (one pass, every legal candidate per decision unit) and the exact budget
// allocator (multiple-choice knapsack, whole Pareto frontier) whose result is an ordinary plan.
#include "core/demo/demodraft.h"
#include "core/export/exporter.h"
#include "core/export/verifier.h"
#include "core/io/checkpoint.h"
#include "core/io/floatconv.h"
#include "core/plan/budgetallocator.h"
#include "core/plan/sensitivitysweep.h"
#include "core/quant/errorstats.h"
#include "core/quant/quanterror.h"
#include "core/quant/roundingsearch.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/schemesweep.h"
#include "quanttesthelpers.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <map>
#include <random>
#include <set>

using namespace spark;
using namespace spark::test;
namespace fs = std::filesystem;

namespace {

double sumSquares(const WeightRows& rows)
{
    double s = 0;
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        for (std::size_t k = 0; k < rows.cols; ++k) {
            const double w = rtn::loadWeight(rows.dtype, rows.row(r), k);
            s += w * w;
        }
    }
    return s;
}

/// Weight-like values with the edge cases the kernels must get right: zero groups, ties, subnormals,
/// outliers, negative zeros.
std::vector<float> randomWeights(std::size_t rows, std::size_t cols, std::uint32_t seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> v(rows * cols);
    for (auto& x : v) {
        x = normal(rng);
    }
    for (std::size_t k = 0; k < std::min<std::size_t>(cols, 128); ++k) {
        v[k] = 0.0f; // an all-zero group (eps scales)
    }
    if (rows > 2) {
        v[1 * cols + 3] = 3.0f; // an outlier
        v[2 * cols + 5] = -0.0f;
        v[2 * cols + 6] = 1e-39f; // subnormal in F32, flushed in 16-bit encodings
        for (std::size_t k = 0; k < 16; ++k) {
            v[2 * cols + 16 + k] = static_cast<float>(k) * 0.25f - 2.0f; // ties of the small grids
        }
    }
    return v;
}

const WeightScheme& scheme(const char* name)
{
    return *findWeightScheme(name);
}

} // namespace

class TestBudgetAllocator : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void initTestCase();
    void sweepKernelMatchesErrorStats_data();
    void sweepKernelMatchesErrorStats();
    void sweepKernelCountsOverflow();
    void sweepKernelNamesNonFinite();
    void unitsAndLegality();
    void unitErrorsMatchPerModuleAnalysis();
    void frontierIsExact();
    void budgetsAndErrorsLookUp();
    void alphaRules();
    void drafterTimeBudget();
    void allocationPlansAreOrdinaryPlans_data();
    void allocationPlansAreOrdinaryPlans();
    void beatsPresetAtItsBudget_data();
    void beatsPresetAtItsBudget();
    void allocationExportsAndVerifies();
    void userEntriesPinUnits();
    void cliSweepAndBudget();
    void roundingCandidatesMeasureTheSearchedRanges();
    void roundingLowersTheErrorAtThePresetBudget();
    void roundingRulesPinUnits();
    void cliRoundingCandidates();

  private:
    QTemporaryDir m_dir;
    std::map<std::string, fs::path> m_drafts;
};

void TestBudgetAllocator::initTestCase()
{
    QVERIFY(m_dir.isValid());
    for (const auto* arch : {"glm-dspark", "laguna-dflash", "llama-eagle3"}) {
        const auto path = fs::path(m_dir.path().toStdString()) / arch;
        writeDemoDraft(describeDemoDraft(arch, DemoScale::Tiny), path, {});
        m_drafts[arch] = path;
    }
}

void TestBudgetAllocator::sweepKernelMatchesErrorStats_data()
{
    QTest::addColumn<int>("dtype");
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("cols");
    QTest::addRow("bf16 16x256") << static_cast<int>(DType::BF16) << 16 << 256;
    QTest::addRow("bf16 9x384") << static_cast<int>(DType::BF16) << 9 << 384;
    QTest::addRow("f16 8x256") << static_cast<int>(DType::F16) << 8 << 256;
    QTest::addRow("f32 8x128") << static_cast<int>(DType::F32) << 8 << 128;
}

void TestBudgetAllocator::sweepKernelMatchesErrorStats()
{
    // D of the sweep kernel must be CT's D: its Σ(w-D)² equals the scalar/SIMD error statistics' up to the
    // order of the float64 additions, for every product scheme, dtype and both thread counts.
    QFETCH(int, dtype);
    QFETCH(int, rows);
    QFETCH(int, cols);
    const auto dt = static_cast<DType>(dtype);
    const auto data =
        encode(dt, randomWeights(static_cast<std::size_t>(rows), static_cast<std::size_t>(cols), 7));
    const auto w = rowsOf(dt, data, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
    std::vector<const WeightScheme*> schemes;
    std::vector<SchemeContext> contexts;
    for (const auto& s : weightSchemes()) {
        if (s.quantizes()) {
            schemes.push_back(&s);
            contexts.push_back(s.codec()->usesGlobalScale() ? s.codec()->contextForAbsmax(dt, weightAbsmax(w))
                                                            : SchemeContext{});
        }
    }
    for (const unsigned threads : {1u, 3u}) {
        SchemeSweepAccumulator sweep(schemes, contexts, w.rowCount, w.cols);
        // Two blocks, to exercise the continuation.
        auto first = w;
        first.rowCount = w.rowCount / 2;
        auto second = w;
        second.data = w.row(first.rowCount);
        second.rowCount = w.rowCount - first.rowCount;
        second.firstRow = first.rowCount;
        sweep.addRows(first, threads);
        sweep.addRows(second, threads);
        QCOMPARE(sweep.rowsDone(), w.rowCount);
        const double norm = sumSquares(w);
        QVERIFY(std::fabs(sweep.sqNorm() - norm) <= 1e-12 * norm);
        const auto result = sweep.result();
        for (std::size_t i = 0; i < schemes.size(); ++i) {
            const auto stats = computeErrorStats(w, *schemes[i], contexts[i]);
            QCOMPARE(result[i].dequantNonFinite, stats.dequantNonFinite);
            QVERIFY2(stats.relErr.has_value() == result[i].sqErr.has_value(), schemes[i]->name.data());
            if (stats.relErr) {
                const double expected = *stats.relErr * *stats.relErr * norm;
                QVERIFY2(std::fabs(*result[i].sqErr - expected) <= 1e-9 * expected + 1e-30,
                         (std::string(schemes[i]->name) + ": " + std::to_string(*result[i].sqErr) + " vs " +
                          std::to_string(expected))
                             .c_str());
            }
        }
    }
}

void TestBudgetAllocator::sweepKernelCountsOverflow()
{
    // -bf16max in a group: int4 gives q = -8 and -8·s overflows bf16 (schemes-spec §8), so D is not finite.
    std::vector<float> values(2 * 128, 0.01f);
    values[5] = -bf16ToFloat(0x7F7F); // -bf16max
    const auto data = encode(DType::BF16, values);
    const auto w = rowsOf(DType::BF16, data, 2, 128);
    const std::vector<const WeightScheme*> schemes{&scheme("W4A16"), &scheme("W8A16:channel"),
                                                   &scheme("FP8_DYNAMIC"), &scheme("W4A16_ASYM")};
    SchemeSweepAccumulator sweep(schemes, {}, 2, 128);
    sweep.addRows(w);
    const auto result = sweep.result();
    for (std::size_t i = 0; i < schemes.size(); ++i) {
        const auto stats = computeErrorStats(w, *schemes[i]);
        QCOMPARE(result[i].dequantNonFinite, stats.dequantNonFinite);
        QCOMPARE(result[i].sqErr.has_value(), stats.dequantNonFinite == 0);
    }
    QVERIFY(result[0].dequantNonFinite > 0);
}

void TestBudgetAllocator::sweepKernelNamesNonFinite()
{
    std::vector<float> values(4 * 128, 0.5f);
    values[2 * 128 + 17] = NAN;
    const auto data = encode(DType::BF16, values);
    auto w = rowsOf(DType::BF16, data, 4, 128);
    w.tensor = "layers.0.mlp.down_proj.weight";
    SchemeSweepAccumulator sweep({&scheme("NVFP4A16")}, {}, 4, 128);
    try {
        sweep.addRows(w, 2);
        QFAIL("a NaN weight must throw");
    } catch (const QuantError& e) {
        QCOMPARE(e.kind(), QuantErrorKind::NonFinite);
        QCOMPARE(e.tensor(), std::string("layers.0.mlp.down_proj.weight"));
        QCOMPARE(*e.index(), std::uint64_t{2 * 128 + 17});
    }
    QVERIFY_THROWS_EXCEPTION(QuantError, weightAbsmax(w));
    values[2 * 128 + 17] = -0.75f;
    const auto finite = encode(DType::BF16, values);
    float expected = 0;
    for (const float v : values) {
        expected = std::max(expected, std::fabs(rtn::roundToDType(DType::BF16, v)));
    }
    QCOMPARE(weightAbsmax(rowsOf(DType::BF16, finite, 4, 128)), expected);
    QVERIFY_THROWS_EXCEPTION(QuantError, SchemeSweepAccumulator({&keepScheme()}, {}, 4, 128));
    QVERIFY_THROWS_EXCEPTION(QuantError, SchemeSweepAccumulator({&scheme("W4A16")}, {}, 4, 96));
}

void TestBudgetAllocator::unitsAndLegality()
{
    const auto checkpoint = Checkpoint::open(m_drafts["glm-dspark"]);
    SweepOptions options;
    const auto sweep = prepareSweep(checkpoint.config(), infosOf(checkpoint), options);
    QVERIFY(!sweep.units.empty());
    int fused = 0;
    for (const auto& u : sweep.units) {
        // The fused gate/up set is one unit, as vLLM decides it.
        if (u.leaf == "gate_up_proj") {
            QCOMPARE(u.modules.size(), std::size_t{2});
            ++fused;
        }
        // DSpark's q/k/v is read raw by vLLM: it must stay BF16 (vllm#51581).
        if (u.leaf == "qkv_proj") {
            QVERIFY(u.fixed());
            QCOMPARE(u.candidates.size(), std::size_t{1});
            QCOMPARE(u.candidates.front().scheme, &keepScheme());
        }
        QCOMPARE(u.candidates.front().scheme, &keepScheme()); // nothing is pinned here: BF16 comes first
    }
    QVERIFY(fused > 0);
    // Laguna's per-head gate has out = heads: no scheme passes the shape gate.
    const auto laguna = Checkpoint::open(m_drafts["laguna-dflash"]);
    const auto lagunaSweep = prepareSweep(laguna.config(), infosOf(laguna), options);
    bool sawGate = false;
    for (const auto& u : lagunaSweep.units) {
        if (u.leaf == "g_proj") {
            sawGate = true;
            QVERIFY2(u.fixed(), u.name.c_str());
            QVERIFY(!u.excluded.empty());
        }
    }
    QVERIFY(sawGate);
    // Only the candidates asked for (and the plan's own), and only known devices.
    options.candidates = parseCandidates("W8A16,NVFP4A16");
    const auto narrow = prepareSweep(checkpoint.config(), infosOf(checkpoint), options);
    for (const auto& u : narrow.units) {
        for (const auto& c : u.candidates) {
            QVERIFY(c.scheme == &keepScheme() || c.scheme == &scheme("W8A16") ||
                    c.scheme == &scheme("NVFP4A16") || c.scheme == &scheme("W4A16"));
        }
    }
    options.device = "tpu";
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             prepareSweep(checkpoint.config(), infosOf(checkpoint), options));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseCandidates("W4A16,W5"));
}

void TestBudgetAllocator::unitErrorsMatchPerModuleAnalysis()
{
    // rel_err of a unit = sqrt(Σ sq_err / Σ sq_norm) over its modules, each measured alone by the error
    // statistics (NVFP4 members with the fused set's global scale).
    const auto checkpoint = Checkpoint::open(m_drafts["glm-dspark"]);
    SweepOptions options;
    options.threads = 2;
    const auto sweep = sweepCheckpoint(checkpoint, options);
    QVERIFY(sweep.measured);
    QVERIFY(sweep.bytesMeasured > 0);
    int checked = 0;
    for (const auto& u : sweep.units) {
        float setAbsmax = 0;
        for (const auto& w : u.weights) {
            setAbsmax = std::max(setAbsmax, weightAbsmax(rowsOf(checkpoint, w)));
        }
        for (const auto& c : u.candidates) {
            if (!c.scheme->quantizes()) {
                QCOMPARE(c.relErr, 0.0);
                continue;
            }
            double sqErr = 0;
            double sqNorm = 0;
            for (const auto& w : u.weights) {
                const auto rows = rowsOf(checkpoint, w);
                const auto context = c.scheme->codec()->usesGlobalScale()
                                         ? c.scheme->codec()->contextForAbsmax(rows.dtype, setAbsmax)
                                         : SchemeContext{};
                const auto stats = computeErrorStats(rows, *c.scheme, context);
                QVERIFY(stats.relErr.has_value());
                const double norm = sumSquares(rows);
                sqErr += *stats.relErr * *stats.relErr * norm;
                sqNorm += norm;
            }
            const double expected = std::sqrt(sqErr / sqNorm);
            QVERIFY2(std::fabs(c.relErr - expected) <= 1e-9 * expected,
                     (u.name + " " + std::string(c.scheme->name)).c_str());
            ++checked;
        }
    }
    QVERIFY(checked > 20);
}

void TestBudgetAllocator::frontierIsExact()
{
    // Brute force over every combination of a small random instance: the frontier is exactly the set of
    // non-dominated (cost, E) points, and every budget gets the least E it can buy.
    std::mt19937 rng(3);
    std::uniform_int_distribution<std::uint64_t> cost(1, 60);
    std::uniform_real_distribution<double> err(0.0, 0.2);
    std::vector<std::vector<std::uint64_t>> costs(6);
    std::vector<std::vector<double>> errors(6);
    for (std::size_t u = 0; u < costs.size(); ++u) {
        costs[u] = {100};
        errors[u] = {0.0};
        for (int o = 0; o < 4; ++o) {
            costs[u].push_back(cost(rng));
            errors[u].push_back(err(rng));
        }
    }
    costs[2][3] = costs[2][1]; // equal costs: only the better one may survive
    const auto sweep = test::syntheticSweep(costs, errors);
    std::vector<double> alphas{1, 2, 0.5, 1, 1, 3};
    const BudgetAllocator allocator(sweep, alphas);
    const auto& frontier = allocator.frontier();
    QVERIFY(frontier.size() > 5);
    for (std::size_t i = 1; i < frontier.size(); ++i) {
        QVERIFY(frontier[i].streamedBytes > frontier[i - 1].streamedBytes);
        QVERIFY(frontier[i].loss < frontier[i - 1].loss);
    }
    // Brute force.
    std::vector<std::pair<std::uint64_t, double>> all;
    std::vector<std::size_t> pick(costs.size(), 0);
    for (;;) {
        std::uint64_t c = sweep.streamedFixed;
        double e = 0;
        for (std::size_t u = 0; u < costs.size(); ++u) {
            c += costs[u][pick[u]];
            e += alphas[u] * errors[u][pick[u]] * errors[u][pick[u]];
        }
        all.emplace_back(c, e);
        std::size_t u = 0;
        while (u < pick.size() && ++pick[u] == costs[u].size()) {
            pick[u++] = 0;
        }
        if (u == pick.size()) {
            break;
        }
    }
    std::sort(all.begin(), all.end());
    std::vector<std::pair<std::uint64_t, double>> pareto;
    for (const auto& p : all) {
        if (pareto.empty() || p.second < pareto.back().second - 1e-15) {
            pareto.push_back(p);
        }
    }
    QCOMPARE(frontier.size(), pareto.size());
    for (std::size_t i = 0; i < pareto.size(); ++i) {
        QCOMPARE(frontier[i].streamedBytes, pareto[i].first);
        QVERIFY(std::fabs(frontier[i].loss - pareto[i].second) < 1e-12);
    }
    for (std::uint64_t budget = sweep.streamedFixed; budget < sweep.streamedFixed + 700; budget += 7) {
        double best = INFINITY;
        for (const auto& p : all) {
            if (p.first <= budget) {
                best = std::min(best, p.second);
            }
        }
        const auto a = allocator.allocate(budget);
        QCOMPARE(a.has_value(), std::isfinite(best));
        if (a) {
            QVERIFY(a->point.streamedBytes <= budget);
            QVERIFY(std::fabs(a->point.loss - best) < 1e-12);
            double recomputed = 0;
            std::uint64_t bytes = sweep.streamedFixed;
            for (const auto& choice : a->units) {
                recomputed += choice.alpha * choice.relErr * choice.relErr;
                bytes += sweep.units[choice.unit].candidate(choice.scheme)->streamedBytes;
            }
            QCOMPARE(recomputed, a->point.loss);
            QCOMPARE(bytes, a->point.streamedBytes);
        }
    }
    // The checkpoint-bytes frontier uses the other column.
    const BudgetAllocator onDisk(sweep, alphas, BudgetKind::Checkpoint);
    QCOMPARE(
        onDisk.frontier().front().bytes, sweep.bytesFixed + [&] {
            std::uint64_t b = 0;
            for (const auto& c : costs) {
                b += *std::min_element(c.begin(), c.end()) + 7;
            }
            return b;
        }());
}

void TestBudgetAllocator::budgetsAndErrorsLookUp()
{
    const auto sweep = test::syntheticSweep({{100, 25, 50}, {100, 30, 60}}, {{0, 0.1, 0.01}, {0, 0.2, 0.02}});
    const BudgetAllocator allocator(sweep, {1, 1});
    QVERIFY(!allocator.allocate(sweep.streamedFixed + 54).has_value());
    const auto cheapest = allocator.allocate(sweep.streamedFixed + 55);
    QVERIFY(cheapest.has_value());
    QCOMPARE(cheapest->point.loss, 0.1 * 0.1 + 0.2 * 0.2);
    const auto all = allocator.allocate(UINT64_MAX);
    QCOMPARE(all->point.loss, 0.0);
    QCOMPARE(all->rules.size(), std::size_t{2});
    QVERIFY(all->rules[0].ends_with("=BF16"));
    const auto within = allocator.cheapestWithin(0.0401);
    QVERIFY(within.has_value());
    QVERIFY(allocator.frontier()[*within].loss <= 0.0401);
    QVERIFY(!allocator.cheapestWithin(-1.0).has_value());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, BudgetAllocator(sweep, {1}));
}

void TestBudgetAllocator::alphaRules()
{
    const auto checkpoint = Checkpoint::open(m_drafts["glm-dspark"]);
    const auto sweep = prepareSweep(checkpoint.config(), infosOf(checkpoint), {});
    const auto alphas =
        resolveAlphas(sweep, {"re:.*mlp.*=3", "re:.*\\.down_proj$=0.5", "re:.*\\.gate_proj$=2"});
    for (std::size_t u = 0; u < sweep.units.size(); ++u) {
        const auto& leaf = sweep.units[u].leaf;
        // Later rules win; a shard name selects its fused unit.
        const double expected = leaf == "down_proj"                                    ? 0.5
                                : leaf == "gate_up_proj"                               ? 2.0
                                : sweep.units[u].name.find("mlp") != std::string::npos ? 3.0
                                                                                       : 1.0;
        QCOMPARE(alphas[u], expected);
    }
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, resolveAlphas(sweep, {"re:.*fc$"}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, resolveAlphas(sweep, {"re:.*fc$=-1"}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, resolveAlphas(sweep, {"re:(=1"}));
    const auto priors = resolveAlphas(sweep, rolePriorAlphas());
    QVERIFY(std::any_of(priors.begin(), priors.end(), [](double a) { return a != 1.0; }));
}

void TestBudgetAllocator::drafterTimeBudget()
{
    SweepResult sweep;
    sweep.streamedBefore = 2'000'000;
    TimingInputs measured;
    measured.drafterMs = 4.0;
    QCOMPARE(streamedBudgetForMs(sweep, measured, 1.0), std::uint64_t{500'000});
    TimingInputs bandwidth;
    bandwidth.bandwidthGBps = 1.0;
    QCOMPARE(streamedBudgetForMs(sweep, bandwidth, 2.0), std::uint64_t{2'000'000});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, streamedBudgetForMs(sweep, {}, 1.0));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, streamedBudgetForMs(sweep, measured, 0.0));
}

void TestBudgetAllocator::allocationPlansAreOrdinaryPlans_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addRow("glm-dspark") << QStringLiteral("glm-dspark");
    QTest::addRow("laguna-dflash") << QStringLiteral("laguna-dflash");
    QTest::addRow("llama-eagle3") << QStringLiteral("llama-eagle3");
}

void TestBudgetAllocator::allocationPlansAreOrdinaryPlans()
{
    // Every frontier point turned into a plan: no errors, each unit exactly the chosen scheme (fused sets
    // whole), must-stay-BF16 modules untouched, sizes equal to the point's.
    QFETCH(QString, arch);
    const auto checkpoint = Checkpoint::open(m_drafts[arch.toStdString()]);
    const auto infos = infosOf(checkpoint);
    SweepOptions options;
    options.threads = 2;
    const auto sweep = sweepCheckpoint(checkpoint, options);
    const BudgetAllocator allocator(sweep, std::vector<double>(sweep.units.size(), 1.0));
    QVERIFY(allocator.frontier().size() > 3);
    QVERIFY(allocator.buildSeconds() < 0.1);
    const auto& f = allocator.frontier();
    for (std::size_t i = 0; i < f.size(); i += std::max<std::size_t>(1, f.size() / 7)) {
        const auto a = allocator.atFrontier(i);
        const auto plan = makeAllocationPlan(checkpoint.config(), infos, allocator, a);
        QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
        QCOMPARE(plan.sizes.streamedAfter, f[i].streamedBytes);
        QCOMPARE(plan.sizes.bytesAfter, f[i].bytes);
        for (const auto& choice : a.units) {
            const auto& unit = sweep.units[choice.unit];
            if (unit.fixed()) {
                QCOMPARE(choice.scheme, unit.candidates.front().scheme);
            }
            for (const auto& m : unit.modules) {
                QCOMPARE(plan.findModule(m)->scheme, choice.scheme);
            }
        }
        // The reported E is the sum of α·rel_err² of the plan's own modules.
        const auto evaluated = allocator.evaluate(plan);
        QVERIFY(evaluated.has_value());
        QCOMPARE(evaluated->loss, a.point.loss);
    }
}

void TestBudgetAllocator::beatsPresetAtItsBudget_data()
{
    QTest::addColumn<QString>("arch");
    QTest::addRow("glm-dspark") << QStringLiteral("glm-dspark");
    QTest::addRow("laguna-dflash") << QStringLiteral("laguna-dflash");
}

void TestBudgetAllocator::beatsPresetAtItsBudget()
{
    QFETCH(QString, arch);
    const auto checkpoint = Checkpoint::open(m_drafts[arch.toStdString()]);
    const auto infos = infosOf(checkpoint);
    const auto base = makePlan(checkpoint.config(), infos, {});
    const auto sweep = sweepCheckpoint(checkpoint, {});
    const BudgetAllocator allocator(sweep, std::vector<double>(sweep.units.size(), 1.0));
    std::string why;
    const auto preset = allocator.evaluate(base, &why);
    QVERIFY2(preset.has_value(), why.c_str());
    QCOMPARE(preset->streamedBytes, base.sizes.streamedAfter);
    const auto same = allocator.allocate(base.sizes.streamedAfter);
    QVERIFY(same.has_value());
    QVERIFY(same->point.loss <= preset->loss);
    const auto within = allocator.cheapestWithin(preset->loss);
    QVERIFY(within.has_value());
    QVERIFY(allocator.frontier()[*within].streamedBytes <= preset->streamedBytes);
}

void TestBudgetAllocator::allocationExportsAndVerifies()
{
    const auto checkpoint = Checkpoint::open(m_drafts["glm-dspark"]);
    const auto infos = infosOf(checkpoint);
    const auto sweep = sweepCheckpoint(checkpoint, {});
    const BudgetAllocator allocator(sweep, resolveAlphas(sweep, rolePriorAlphas()));
    // A point in the middle of the frontier mixes several schemes.
    const auto a = allocator.atFrontier(allocator.frontier().size() / 2);
    const auto plan = makeAllocationPlan(checkpoint.config(), infos, allocator, a);
    QVERIFY(plan.errors.empty());
    QVERIFY(plan.schemesUsed().size() >= 2);
    const fs::path out = fs::path(m_dir.path().toStdString()) / "allocated";
    exportCheckpoint(checkpoint, plan, {out});
    const auto report = verifyExport(checkpoint, Checkpoint::open(out), {});
    QVERIFY2(report.ok(), report.summary().c_str());
}

void TestBudgetAllocator::userEntriesPinUnits()
{
    // A unit the user names keeps the user's scheme; the allocator works around it.
    const auto checkpoint = Checkpoint::open(m_drafts["glm-dspark"]);
    SweepOptions options;
    options.plan.schemes = {"re:.*\\.layers\\.0\\.mlp\\.down_proj$=W8A16"};
    const auto sweep = sweepCheckpoint(checkpoint, options);
    const BudgetAllocator allocator(sweep, std::vector<double>(sweep.units.size(), 1.0));
    const auto a = allocator.atFrontier(0);
    bool pinned = false;
    for (const auto& choice : a.units) {
        const auto& unit = sweep.units[choice.unit];
        if (unit.name.ends_with("layers.0.mlp.down_proj") ||
            unit.modules.front() == "layers.0.mlp.down_proj") {
            pinned = true;
            QVERIFY(unit.fixed());
            QCOMPARE(choice.scheme, &scheme("W8A16"));
        }
    }
    QVERIFY(pinned);
    const auto plan = makeAllocationPlan(checkpoint.config(), infosOf(checkpoint), allocator, a);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
}

void TestBudgetAllocator::cliSweepAndBudget()
{
    const auto path = m_drafts["glm-dspark"].string();
    const auto sweep = runCli({"sweep", path, "--candidates", "W4A16,W8A16,NVFP4A16", "--json"});
    QVERIFY2(sweep.exitCode == 0, sweep.err.c_str());
    const auto s = nlohmann::json::parse(sweep.out);
    QVERIFY(!s["units"].empty());
    for (const auto& u : s["units"]) {
        QVERIFY(u.contains("name") && u["modules"].is_array() && u["candidates"].is_array());
        for (const auto& c : u["candidates"]) {
            QVERIFY(c.contains("scheme") && c.contains("streamed_bytes") && c.contains("bytes") &&
                    c.contains("rel_err"));
        }
    }

    const auto plan = runCli({"plan", path, "--budget", "preset", "--compare-preset", "--json"});
    QVERIFY2(plan.exitCode == 0, plan.err.c_str());
    const auto p = nlohmann::json::parse(plan.out);
    const auto& a = p["allocation"];
    QCOMPARE(a["objective"].get<std::string>(), std::string("streamed_bytes"));
    QVERIFY(a["streamed_bytes"].get<std::uint64_t>() <= a["budget_bytes"].get<std::uint64_t>());
    QCOMPARE(p["streamed_after"].get<std::uint64_t>(), a["streamed_bytes"].get<std::uint64_t>());
    QVERIFY(a["frontier"].size() > 2);
    QVERIFY(a["preset_comparison"]["error_no_larger"].get<bool>());
    QVERIFY(a["preset_comparison"]["bytes_no_more"].get<bool>());
    // Each module's scheme in the plan is the one its unit got.
    std::map<std::string, std::string> unitScheme;
    for (const auto& u : a["units"]) {
        for (const auto& m : u["modules"]) {
            unitScheme[m.get<std::string>()] = u["scheme"].get<std::string>();
        }
    }
    for (const auto& m : p["modules"]) {
        const auto it = unitScheme.find(m["name"].get<std::string>());
        if (it != unitScheme.end()) {
            QCOMPARE(m["scheme"].get<std::string>(), it->second);
        }
    }
    const auto text = runCli({"plan", path, "--budget-file", "preset", "--compare-preset"});
    QVERIFY2(text.exitCode == 0, text.err.c_str());
    QVERIFY(text.out.find("allocator, same budget") != std::string::npos);
    QVERIFY(text.out.find("E no larger at the preset's budget: yes") != std::string::npos);

    const auto tiny = runCli({"plan", path, "--budget", "1KiB"});
    QCOMPARE(tiny.exitCode, 2);
    QVERIFY(tiny.err.find("below the cheapest legal plan") != std::string::npos);
    const auto noTiming = runCli({"plan", path, "--budget-ms", "1"});
    QCOMPARE(noTiming.exitCode, 2);
    const auto ms = runCli({"plan", path, "--budget-ms", "0.6", "--drafter-ms", "1", "--json"});
    QVERIFY2(ms.exitCode == 0, ms.err.c_str());
    const auto m = nlohmann::json::parse(ms.out);
    QCOMPARE(m["allocation"]["objective"].get<std::string>(), std::string("drafter_ms"));
    QVERIFY(m["allocation"]["predicted_drafter_ms"].get<double>() <= 0.6);
    const auto both = runCli({"plan", path, "--budget", "1GiB", "--budget-ms", "1"});
    QCOMPARE(both.exitCode, 2);
}

void TestBudgetAllocator::roundingCandidatesMeasureTheSearchedRanges()
{
    // A searched candidate's rel_err is the error under the ranges its method searches on each member (NVFP4
    // with one global scale over the fused set, from the shrunk statistics), found here with the search and
    // the error statistics directly. range minimises the L2 error with p = 1 among its candidates, so it
    // never loses to rtn.
    const auto checkpoint = Checkpoint::open(m_drafts["llama-eagle3"]);
    SweepOptions options;
    options.candidates = parseCandidates("W4A16,W4A16_ASYM,NVFP4A16");
    options.roundings = parseRoundingCandidates("mse,range");
    options.threads = 2;
    const auto sweep = sweepCheckpoint(checkpoint, options);
    QCOMPARE(sweep.roundings.size(), std::size_t{3});
    int checked = 0;
    for (const auto& u : sweep.units) {
        if (u.fixed()) {
            continue;
        }
        for (const auto& c : u.candidates) {
            if (!c.scheme->quantizes() || !c.rounding->searches()) {
                continue;
            }
            std::vector<std::shared_ptr<const GroupRanges>> ranges;
            float setAbsmax = 0;
            for (const auto& w : u.weights) {
                ranges.push_back(searchRanges(*c.rounding, *c.scheme, rowsOf(checkpoint, w), 2));
                setAbsmax = std::max(setAbsmax, ranges.back()->absmax);
            }
            double sqErr = 0;
            double sqNorm = 0;
            for (std::size_t i = 0; i < u.weights.size(); ++i) {
                const auto rows = rowsOf(checkpoint, u.weights[i]);
                auto context = c.scheme->codec()->usesGlobalScale()
                                   ? c.scheme->codec()->contextForAbsmax(rows.dtype, setAbsmax)
                                   : SchemeContext{};
                context.ranges = ranges[i];
                const auto stats = computeErrorStats(rows, *c.scheme, context);
                QVERIFY(stats.sqErr.has_value());
                sqErr += *stats.sqErr;
                sqNorm += stats.sqNorm;
            }
            const double expected = std::sqrt(sqErr / sqNorm);
            QVERIFY2(std::fabs(c.relErr - expected) <= 1e-12 * expected,
                     (u.name + " " + candidateLabel(c)).c_str());
            if (c.rounding->name == "range") {
                const auto* rtn = u.candidate(c.scheme, &rtnRounding());
                QVERIFY(rtn);
                QVERIFY2(c.relErr <= rtn->relErr * (1 + 1e-9), (u.name + " " + candidateLabel(c)).c_str());
            }
            ++checked;
        }
    }
    QVERIFY(checked >= 20);
}

void TestBudgetAllocator::roundingLowersTheErrorAtThePresetBudget()
{
    // With rounding free, the frontier at the preset's bytes is lower than with rtn only; the allocation is
    // an ordinary plan whose modules carry the chosen rounding, and its export verifies (each method
    // recomputed) with one config group per (scheme, rounding).
    const auto checkpoint = Checkpoint::open(m_drafts["llama-eagle3"]);
    const auto infos = infosOf(checkpoint);
    const auto base = makePlan(checkpoint.config(), infos, {});
    SweepOptions rtnOnly;
    rtnOnly.candidates = parseCandidates("W4A16,W4A16:g64,W8A16");
    rtnOnly.threads = 2;
    auto rounded = rtnOnly;
    rounded.roundings = parseRoundingCandidates("mse,range");
    auto plainSweep = sweepCheckpoint(checkpoint, rtnOnly);
    auto roundedSweep = sweepCheckpoint(checkpoint, rounded);
    const BudgetAllocator plain(plainSweep, std::vector<double>(plainSweep.units.size(), 1.0));
    const BudgetAllocator free(roundedSweep, std::vector<double>(roundedSweep.units.size(), 1.0));
    const auto preset = free.evaluate(base);
    QVERIFY(preset.has_value());
    const auto before = plain.allocate(base.sizes.streamedAfter);
    const auto after = free.allocate(base.sizes.streamedAfter);
    QVERIFY(before && after);
    QVERIFY(after->point.streamedBytes <= base.sizes.streamedAfter);
    QVERIFY2(after->point.loss < 0.95 * before->point.loss,
             (std::to_string(after->point.loss) + " vs " + std::to_string(before->point.loss)).c_str());
    QVERIFY(!after->roundingRules.empty());

    const auto plan = makeAllocationPlan(checkpoint.config(), infos, free, *after);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
    std::set<std::string> methods;
    for (const auto& choice : after->units) {
        for (const auto& m : free.sweep().units[choice.unit].modules) {
            const auto* planned = plan.findModule(m);
            QCOMPARE(planned->scheme, choice.scheme);
            if (choice.scheme->quantizes()) {
                QCOMPARE(planned->rounding, choice.rounding);
                methods.insert(std::string(choice.rounding->name));
            }
        }
    }
    // The allocator spends the freedom: some unit rounds by a searching method (which one is the data's).
    QVERIFY(methods.count("mse") + methods.count("range") > 0);
    const auto evaluated = free.evaluate(plan);
    QVERIFY(evaluated.has_value());
    QCOMPARE(evaluated->loss, after->point.loss);

    const fs::path out = fs::path(m_dir.path().toStdString()) / "allocated-rounding";
    exportCheckpoint(checkpoint, plan, {out});
    const auto report = verifyExport(checkpoint, Checkpoint::open(out), {});
    QVERIFY2(report.ok(), report.summary().c_str());
    std::set<std::string> observers;
    for (const auto& [name, group] :
         Checkpoint::open(out).config()["quantization_config"]["config_groups"].items()) {
        observers.insert(group["weights"]["observer"].get<std::string>());
    }
    QCOMPARE(observers.count("memoryless_mse"), methods.count("mse"));
}

void TestBudgetAllocator::roundingRulesPinUnits()
{
    // A unit a --rounding rule of the user names keeps that rounding whatever the scheme; the others are
    // free.
    const auto checkpoint = Checkpoint::open(m_drafts["llama-eagle3"]);
    SweepOptions options;
    options.candidates = parseCandidates("W4A16,W8A16");
    options.roundings = parseRoundingCandidates("range");
    options.plan.roundings = {"re:.*\\.down_proj$=mse"};
    options.threads = 2;
    const auto sweep = sweepCheckpoint(checkpoint, options);
    int pinned = 0;
    for (const auto& u : sweep.units) {
        const bool down = u.leaf == "down_proj";
        QCOMPARE(!u.roundingPinnedBy.empty(), down);
        for (const auto& c : u.candidates) {
            if (c.scheme->quantizes()) {
                QVERIFY(down ? c.rounding->name == "mse" : c.rounding->name != "mse");
            }
        }
        pinned += down ? 1 : 0;
    }
    QVERIFY(pinned > 0);
    const BudgetAllocator allocator(sweep, std::vector<double>(sweep.units.size(), 1.0));
    const auto a = allocator.atFrontier(allocator.frontier().size() - 1);
    for (const auto& rule : a.roundingRules) {
        QVERIFY2(rule.find("down_proj") == std::string::npos, rule.c_str());
    }
    const auto plan = makeAllocationPlan(checkpoint.config(), infosOf(checkpoint), allocator, a);
    QVERIFY2(plan.errors.empty(), plan.errors.empty() ? "" : plan.errors.front().c_str());
}

void TestBudgetAllocator::cliRoundingCandidates()
{
    const auto path = m_drafts["llama-eagle3"].string();
    const auto planFile = fs::path(m_dir.path().toStdString()) / "rounded-plan.json";
    const auto run = runCli({"plan", path, "--budget", "preset", "--candidates", "W4A16,W4A16:g64",
                             "--rounding-candidates", "mse,range", "--compare-preset", "--json",
                             "--save-plan", planFile.string()});
    QVERIFY2(run.exitCode == 0, run.err.c_str());
    const auto p = nlohmann::json::parse(run.out);
    const auto& a = p["allocation"];
    QVERIFY(a["preset_comparison"]["error_ratio_same_budget"].get<double>() < 0.99);
    QVERIFY(!a["rounding_rules"].empty());
    std::map<std::string, std::string> unitRounding;
    for (const auto& u : a["units"]) {
        for (const auto& m : u["modules"]) {
            unitRounding[m.get<std::string>()] = u["rounding"].get<std::string>();
        }
    }
    int compared = 0;
    for (const auto& m : p["modules"]) {
        const auto it = unitRounding.find(m["name"].get<std::string>());
        if (it != unitRounding.end() && m["decision"] == "quantize") {
            QCOMPARE(m["rounding"].get<std::string>(), it->second);
            ++compared;
        }
    }
    QVERIFY(compared > 0);
    // The saved plan reproduces the allocation with its rules alone, and records what was searched.
    const auto saved = nlohmann::json::parse(readFile(planFile));
    QVERIFY(saved["roundings"] == a["rounding_rules"]);
    QVERIFY(saved["budget"]["rounding_candidates"] == nlohmann::json({"mse", "range"}));
    const auto again = runCli({"plan", path, "--plan-file", planFile.string(), "--json"});
    QVERIFY2(again.exitCode == 0, again.err.c_str());
    QVERIFY(nlohmann::json::parse(again.out)["streamed_after"] == p["streamed_after"]);

    const auto bad = runCli({"plan", path, "--budget", "preset", "--rounding-candidates", "gptq"});
    QCOMPARE(bad.exitCode, 2);
    QVERIFY(bad.err.find("unknown rounding method 'gptq'") != std::string::npos);
    const auto noBudget = runCli({"plan", path, "--rounding-candidates", "mse"});
    QCOMPARE(noBudget.exitCode, 2);
    const auto sweep =
        runCli({"sweep", path, "--candidates", "W4A16", "--rounding-candidates", "mse", "--json"});
    QVERIFY2(sweep.exitCode == 0, sweep.err.c_str());
    const auto s = nlohmann::json::parse(sweep.out);
    QVERIFY(s["roundings"] == nlohmann::json({"rtn", "mse"}));
}

QTEST_GUILESS_MAIN(TestBudgetAllocator)
#include "tst_budgetallocator.moc"
