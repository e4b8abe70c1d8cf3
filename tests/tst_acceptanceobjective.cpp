// The pieces of the acceptance-driven allocator that need no forward: the allocator over any per-candidate
// loss (against brute force), the selection/report split of a capture's anchors, the screen's pruning, the
// paired comparison of two plans and the FP8 input quantization of FP8_DYNAMIC modules (against values
// worked out by hand from the float8_e4m3fn grid).
#include "core/allocate/acceptanceobjective.h"
#include "core/forward/expectedacceptance.h"
#include "core/forward/inputquantization.h"
#include "core/quant/weightscheme.h"
#include "testsupport.h"

#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

using namespace spark;

namespace {

/// test::syntheticSweep() with every rel_err zero: the losses below are the allocator's only measure.
SweepResult sweepWithCosts(const std::vector<std::vector<std::uint64_t>>& costs)
{
    std::vector<std::vector<double>> errors;
    for (const auto& c : costs) {
        errors.emplace_back(c.size(), 0.0);
    }
    return test::syntheticSweep(costs, errors);
}

} // namespace

class TestAcceptanceObjective : public QObject
{
    Q_OBJECT

  private Q_SLOTS:
    void allocatorMinimisesAnyLoss();
    void allocatorRejectsMalformedLosses();
    void anchorsSplitBySample();
    void screenKeepsTheParetoSetTheRecipeAndBf16();
    void objectiveLossCountsOnlySignificantGains();
    void expectedAcceptedIsTheSumOfPrefixProducts();
    void pairedDifferenceOfTwoPlans();
    void fp8InputsFollowTheE4m3Grid();
    void onlyFp8DynamicQuantizesInputs();
};

void TestAcceptanceObjective::allocatorMinimisesAnyLoss()
{
    // Brute force over every combination: the loss of each budget's allocation is the least sum of the
    // chosen candidates' losses within it, whatever the losses (they need not follow any weight error).
    std::mt19937 rng(11);
    std::uniform_int_distribution<std::uint64_t> cost(1, 40);
    // Negative losses too: a candidate the target-aware objective finds significantly better than BF16.
    std::uniform_real_distribution<double> loss(-0.3, 1.0);
    std::vector<std::vector<std::uint64_t>> costs(5);
    CandidateLosses losses;
    for (auto& c : costs) {
        c = {90};
        auto& row = losses.perUnit.emplace_back(std::vector<double>{0.0});
        for (int o = 0; o < 3; ++o) {
            c.push_back(cost(rng));
            row.push_back(loss(rng));
        }
    }
    const auto sweep = sweepWithCosts(costs);
    const BudgetAllocator allocator(sweep, losses);
    for (std::uint64_t budget = sweep.streamedFixed; budget < sweep.streamedFixed + 5 * 90; budget += 5) {
        double best = INFINITY;
        std::vector<std::size_t> pick(costs.size(), 0);
        for (;;) {
            std::uint64_t c = sweep.streamedFixed;
            double l = 0;
            for (std::size_t u = 0; u < costs.size(); ++u) {
                c += costs[u][pick[u]];
                l += losses.perUnit[u][pick[u]];
            }
            if (c <= budget) {
                best = std::min(best, l);
            }
            std::size_t u = 0;
            while (u < pick.size() && ++pick[u] == costs[u].size()) {
                pick[u++] = 0;
            }
            if (u == pick.size()) {
                break;
            }
        }
        const auto a = allocator.allocate(budget);
        QCOMPARE(a.has_value(), std::isfinite(best));
        if (a) {
            QVERIFY(std::fabs(a->point.loss - best) < 1e-12);
            double sum = 0;
            for (const auto& choice : a->units) {
                sum += choice.loss;
                QCOMPARE(choice.alpha, 1.0);
            }
            QCOMPARE(sum, a->point.loss);
        }
    }
}

void TestAcceptanceObjective::allocatorRejectsMalformedLosses()
{
    const auto sweep = sweepWithCosts({{10, 4}});
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, BudgetAllocator(sweep, CandidateLosses{{{0.0}}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, BudgetAllocator(sweep, CandidateLosses{{{0.0, NAN}}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, BudgetAllocator(sweep, CandidateLosses{}));
}

void TestAcceptanceObjective::anchorsSplitBySample()
{
    std::vector<Anchor> eligible;
    for (std::int64_t s = 0; s < 6; ++s) {
        for (std::int64_t p = 1; p <= 50; ++p) {
            eligible.push_back({s, p});
        }
    }
    AnchorSplitCounts counts;
    counts.screen = 20;
    counts.confirm = 60;
    counts.report = 0;
    counts.seed = 5;
    const auto split = splitAnchors(eligible, counts);
    QCOMPARE(split.selectionPool, 150);
    QCOMPARE(split.screen.size(), std::size_t{20});
    QCOMPARE(split.confirm.size(), std::size_t{60});
    QCOMPARE(split.report.size(), std::size_t{150});
    for (const auto& a : split.screen) {
        QCOMPARE(a.sample % 2, std::int64_t{0});
        QVERIFY(std::binary_search(split.confirm.begin(), split.confirm.end(), a));
    }
    for (const auto& a : split.confirm) {
        QCOMPARE(a.sample % 2, std::int64_t{0});
    }
    for (const auto& a : split.report) {
        QCOMPARE(a.sample % 2, std::int64_t{1});
    }
    // Everything drawn when asked for 0; one sample cannot be split.
    counts.screen = 0;
    QCOMPARE(splitAnchors(eligible, counts).confirm.size(), std::size_t{150});
    const std::vector<Anchor> oneSample(eligible.begin(), eligible.begin() + 50);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, splitAnchors(oneSample, counts));
}

void TestAcceptanceObjective::screenKeepsTheParetoSetTheRecipeAndBf16()
{
    // One unit: BF16 (cost 100), then candidates of cost 20, 30, 40, 50 with screen KL 0.5, 0.6, 0.2, 0.1.
    // The cost-30 one is dominated by the cheaper cost-20 one; the rest are on the Pareto set (BF16 always
    // goes on).
    auto sweep = sweepWithCosts({{100, 20, 30, 40, 50}});
    std::vector<AcceptanceEffect> screen(5);
    const std::vector<double> kl{0, 0.5, 0.6, 0.2, 0.1};
    for (std::size_t c = 0; c < 5; ++c) {
        screen[c].kl = kl[c];
    }
    QCOMPARE(screenSurvivors(sweep.units[0], kl), (std::vector<bool>{true, true, false, true, true}));
    // The recipe's candidate goes on even when dominated, so that the recipe stays on the frontier's map.
    sweep.units[0].baseScheme = sweep.units[0].candidates[2].scheme;
    QCOMPARE(screenSurvivors(sweep.units[0], kl), (std::vector<bool>(5, true)));
    sweep.units[0].baseScheme = &keepScheme();

    UnitEffects effects;
    effects.loss = AcceptanceLoss::Kl;
    effects.perUnit = {screen};
    effects.survived = {screenSurvivors(sweep.units[0], kl)};
    const auto in = acceptanceAllocatorInput(sweep, effects);
    QCOMPARE(in.sweep.units[0].candidates.size(), std::size_t{4});
    QCOMPARE(in.losses.perUnit[0], (std::vector<double>{0, 0.5, 0.2, 0.1}));
    // Effects of another sweep are refused.
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             acceptanceAllocatorInput(sweepWithCosts({{1}, {2}}), effects));
}

void TestAcceptanceObjective::objectiveLossCountsOnlySignificantGains()
{
    // The loss is the upper end of the objective's loss: minus the low end of its change. A gain inside
    // its interval costs what it may plausibly cost; only a gain whose whole interval is above 0 is one.
    const auto effect = [](double mean, double low, double high) {
        AcceptanceEffect e;
        e.kl = 0.125;
        e.objective = mean;
        e.objectiveLow = low;
        e.objectiveHigh = high;
        return e;
    };
    UnitEffects effects;
    QCOMPARE(effects.lossOf(effect(-0.04, -0.06, -0.02)), 0.06);
    QCOMPARE(effects.lossOf(effect(0.01, -0.01, 0.03)), 0.01);
    QCOMPARE(effects.lossOf(effect(0.02, 0.005, 0.035)), -0.005);
    QCOMPARE(effects.lossOf(AcceptanceEffect{}), 0.0); // BF16: no change, no interval
    effects.loss = AcceptanceLoss::Kl;
    QCOMPARE(effects.lossOf(effect(0.02, 0.005, 0.035)), 0.125);
    QCOMPARE(parseAcceptanceLoss("kl"), AcceptanceLoss::Kl);
    QCOMPARE(parseAcceptanceLoss(acceptanceLossName(AcceptanceLoss::ExpectedAcceptance)),
             AcceptanceLoss::ExpectedAcceptance);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, parseAcceptanceLoss("tau"));
}

void TestAcceptanceObjective::expectedAcceptedIsTheSumOfPrefixProducts()
{
    // By hand: q = (0.5, 0.4, 0.9) accepts the first with 0.5, the first two with 0.2, all three with 0.18.
    const std::vector<double> q{0.5, 0.4, 0.9};
    QVERIFY(std::fabs(expectedAccepted(q) - 0.88) < 1e-15);
    QCOMPARE(expectedAccepted(std::vector<double>{1, 1, 1}), 3.0);
    QCOMPARE(expectedAccepted(std::vector<double>{0, 1, 1}), 0.0);
    QCOMPARE(expectedAccepted({}), 0.0);
}

void TestAcceptanceObjective::pairedDifferenceOfTwoPlans()
{
    PlanAcceptance a, b;
    a.reportAccepted = {2, 3, 1, 0};
    b.reportAccepted = {1, 3, 1, 1};
    const auto d = pairedDifference(a, b);
    // Differences 1, 0, 0, −1: mean 0, sample sd sqrt(2/3), half-width 1.96 · sd / 2.
    QCOMPARE(d.anchors, std::int64_t{4});
    QCOMPARE(d.mean, 0.0);
    const double half = 1.959963984540054 * std::sqrt(2.0 / 3.0) / 2.0;
    QVERIFY(std::fabs(d.high - half) < 1e-12);
    QVERIFY(std::fabs(d.low + half) < 1e-12);
    b.reportAccepted.pop_back();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, pairedDifference(a, b));
}

void TestAcceptanceObjective::fp8InputsFollowTheE4m3Grid()
{
    Activations x(3, 4);
    // Row 0: absmax 448 → scale 1. 0.3 lies between the e4m3 values 0.28125 and 0.3125 (step 2^-5 in
    // [0.25, 0.5)) and is nearer the latter. Row 1: absmax 896 → scale 2; 440 / 2 = 220 lies in [128, 256)
    // (step 16): 13.75 steps round to 14 → 224 → 448; −0.001 / 2 is below half the smallest subnormal
    // 2^-9 → −0. Row 2: all zero, the minimum scale keeps it finite and zero.
    const float values[] = {448, 1, 0.3f, 0, 896, 2, -0.001f, 440, 0, 0, 0, 0};
    std::copy(std::begin(values), std::end(values), x.values.begin());
    quantizeInputs(InputQuantization::Fp8PerToken, x);
    const float expected[] = {448, 1, 0.3125f, 0, 896, 2, -0.0f, 448, 0, 0, 0, 0};
    for (std::size_t i = 0; i < 12; ++i) {
        QCOMPARE(x.values[i], expected[i]);
    }
    QVERIFY(std::signbit(x.values[6]));
    // A tie goes to the even code: 1.0625 lies halfway between 1.0 (mantissa 0) and 1.125 (mantissa 1).
    Activations tie(1, 2);
    tie.values = {448, 1.0625f};
    quantizeInputs(InputQuantization::Fp8PerToken, tie);
    QCOMPARE(tie.values[1], 1.0f);
    // Weight-only schemes leave the inputs as they are.
    Activations same(1, 2);
    same.values = {0.3f, 7};
    quantizeInputs(InputQuantization::None, same);
    QCOMPARE(same.values, (std::vector<float>{0.3f, 7}));
}

void TestAcceptanceObjective::onlyFp8DynamicQuantizesInputs()
{
    for (const auto& scheme : weightSchemes()) {
        const bool fp8 = std::string_view(scheme.name) == "FP8_DYNAMIC";
        QCOMPARE(inputQuantizationOf(scheme) == InputQuantization::Fp8PerToken, fp8);
    }
}

QTEST_GUILESS_MAIN(TestAcceptanceObjective)
#include "tst_acceptanceobjective.moc"
