#include "core/bench/speedmodel.h"

#include "core/bench/speedmodelformat.h"
#include "core/util/textformat.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace spark {
namespace {

std::string ms(double v)
{
    return formatSignificant(v) + " ms";
}

/// D(j) = τ(j) / T(j) with T(j) = V₀ + j·v + n(j)·t_d, in tok/s (times in ms).
std::vector<double> rates(const std::vector<double>& tau, double verifyMs, double perTokenMs,
                          DrafterKind kind, double stepMs, std::vector<double>* cycles = nullptr)
{
    std::vector<double> out;
    for (std::size_t j = 0; j < tau.size(); ++j) {
        const double cycle = verifyMs + static_cast<double>(j) * perTokenMs +
                             draftStepsPerCycle(kind, static_cast<int>(j)) * stepMs;
        if (cycles) {
            cycles->push_back(cycle);
        }
        out.push_back(1000.0 * tau[j] / cycle);
    }
    return out;
}

/// argmax over j, ties to the smaller j.
int bestOf(const std::vector<double>& rates)
{
    int best = 0;
    for (std::size_t j = 1; j < rates.size(); ++j) {
        if (rates[j] > rates[static_cast<std::size_t>(best)]) {
            best = static_cast<int>(j);
        }
    }
    return best;
}

std::vector<double> tokensPerVerify(const std::vector<double>& acceptance)
{
    std::vector<double> tau{1.0};
    for (const double a : acceptance) {
        tau.push_back(tau.back() + a);
    }
    return tau;
}

/// a_i of @p cell, checked: known k, in [0, 1], non-increasing, agreeing with a declared k.
const std::vector<double>& checkedAcceptance(const BenchCell& cell)
{
    const auto& acc = cell.acceptance;
    auto fail = [&](const std::string& problem) { throw SpeedModelError(cell.arm, cell.promptLen, problem); };
    if (!acc.problem.empty()) {
        fail(acc.problem);
    }
    if (acc.declaredK > 0 && acc.k() > 0 && acc.declaredK != acc.k()) {
        fail("num_speculative_tokens is " + std::to_string(acc.declaredK) +
             " but the per-position acceptance has " + std::to_string(acc.k()) + " positions");
    }
    for (int i = 0; i < acc.k(); ++i) {
        const double a = acc.perPosition[static_cast<std::size_t>(i)];
        if (!(a >= 0.0 && a <= 1.0)) {
            fail("per-position acceptance a_" + std::to_string(i) + " = " + formatGeneral(a, 6) +
                 " is not a fraction between 0 and 1");
        }
        // Position i needs all earlier ones accepted, so a_i cannot exceed a_{i−1} (beyond rounding).
        if (i > 0 && a > acc.perPosition[static_cast<std::size_t>(i - 1)] + 1e-9) {
            fail("per-position acceptance increases from a_" + std::to_string(i - 1) + " = " +
                 formatGeneral(acc.perPosition[static_cast<std::size_t>(i - 1)], 6) + " to a_" +
                 std::to_string(i) + " = " + formatGeneral(a, 6) +
                 "; acceptance is a prefix, so a_i cannot increase");
        }
    }
    return acc.perPosition;
}

double measuredRate(const BenchCell& cell)
{
    const auto* d = cell.metric(benchmetric::kDecodeTokS);
    if (!d || !(d->mean > 0) || !std::isfinite(d->mean)) {
        throw SpeedModelError(
            cell.arm, cell.promptLen,
            "no decode tok/s measured (mean_tpot_ms or a decode_tok_s column); the cycle time "
            "T = τ(k)/D needs it");
    }
    return d->mean;
}

/// A cell without speculation with a measured rate: D₀ for its prompt length.
bool isNoSpeculation(const BenchCell& cell)
{
    const auto* d = cell.metric(benchmetric::kDecodeTokS);
    return !cell.acceptance.drafted && cell.acceptance.k() == 0 && cell.acceptance.problem.empty() && d &&
           d->mean > 0 && std::isfinite(d->mean);
}

} // namespace

SpeedModelError::SpeedModelError(std::string arm, long long promptLen, const std::string& problem)
    : std::runtime_error(arm.empty() ? problem : speedModelCellName(arm, promptLen) + ": " + problem),
      m_arm(std::move(arm)), m_promptLen(promptLen)
{
}

std::string speedModelCellName(const std::string& arm, long long promptLen)
{
    return "arm '" + arm + "'" +
           (promptLen > 0 ? " at prompt length " + std::to_string(promptLen) : std::string());
}

SpeedModel computeSpeedModel(const BenchReport& report, const SpeedModelOptions& options)
{
    const double tD = options.drafterMs;
    if (!(tD > 0) || !std::isfinite(tD)) {
        throw SpeedModelError({}, 0, "the drafter time per verify cycle must be a positive number of ms");
    }
    SpeedModel model;
    model.drafterMs = tD;
    model.kind = options.kind;
    model.kindBasis = options.kindBasis;
    model.baselineArm = report.baselineArm;
    if (options.savingMs) {
        if (!std::isfinite(*options.savingMs)) {
            throw SpeedModelError({}, 0, "the drafter-time saving must be a number of ms");
        }
        model.savingMs = *options.savingMs;
        model.savingBasis = "given";
    } else if (options.streamedBefore > 0) {
        model.streamedBefore = options.streamedBefore;
        model.streamedAfter = options.streamedAfter;
        const double ratio =
            static_cast<double>(options.streamedAfter) / static_cast<double>(options.streamedBefore);
        model.savingMs = tD * (1.0 - ratio);
        model.savingBasis = "t_D·(1 − S′/S) from the plan's bytes per draft step, S = " +
                            formatBytes(options.streamedBefore) +
                            " → S′ = " + formatBytes(options.streamedAfter) + " (gathers excluded)";
    }
    if (model.savingMs && *model.savingMs > tD) {
        throw SpeedModelError(
            {}, 0, "the drafter-time saving " + ms(*model.savingMs) + " exceeds the drafter time " + ms(tD));
    }

    // The quantized arm: given, or the first arm after the baseline that speculates.
    std::string quantizedArm;
    if (options.quantizedArm) {
        if (std::find(report.arms.begin(), report.arms.end(), *options.quantizedArm) == report.arms.end()) {
            throw SpeedModelError({}, 0,
                                  "the quantized arm '" + *options.quantizedArm + "' is not in the data");
        }
        quantizedArm = *options.quantizedArm;
    } else if (model.savingMs) {
        // Only an arm of the baseline's setup (target model, k) measures the same draft quantized.
        const auto* setup = report.setupOf(report.baselineArm);
        for (const auto& c : report.cells) {
            if (c.arm != report.baselineArm && c.acceptance.k() > 0 && report.setupOf(c.arm) == setup) {
                quantizedArm = c.arm;
                break;
            }
        }
    }

    // D₀ per prompt length, from the first arm without speculation.
    std::map<long long, const BenchCell*> noSpec;
    for (const auto& c : report.cells) {
        if (!isNoSpeculation(c)) {
            continue;
        }
        if (!noSpec.emplace(c.promptLen, &c).second) {
            model.warnings.push_back(
                {BenchWarningKind::SkippedInput,
                 {},
                 0,
                 speedModelCellName(c.arm, c.promptLen) +
                     " is a second arm without speculation; the verify cost is fitted from '" +
                     noSpec[c.promptLen]->arm + "'"});
        }
    }

    bool anyFitted = false;
    bool anyDefault = false;
    for (const auto& cell : report.cells) {
        const auto& acceptance = checkedAcceptance(cell);
        if (acceptance.empty()) {
            if (cell.acceptance.drafted) {
                throw SpeedModelError(
                    cell.arm, cell.promptLen,
                    "k unknown: the repeats drafted tokens but give no per-position acceptance "
                    "(import the /metrics per-position counters or the bench JSON's "
                    "spec_decode_per_position_acceptance_rates)");
            }
            continue;
        }
        SpeedModelCell m;
        m.arm = cell.arm;
        m.promptLen = cell.promptLen;
        m.k = static_cast<int>(acceptance.size());
        m.acceptance = acceptance;
        m.tokensPerVerify = tokensPerVerify(acceptance);
        m.measuredTokS = measuredRate(cell);
        m.cycleMs = 1000.0 * m.tokensPerVerify.back() / m.measuredTokS;
        const bool isQuantizedArm = !quantizedArm.empty() && cell.arm == quantizedArm && model.savingMs;
        m.drafterMs = isQuantizedArm ? tD - *model.savingMs : tD;
        m.drafterBasis = isQuantizedArm                   ? "t_D − Δ (the quantized draft)"
                         : cell.arm == report.baselineArm ? "given"
                                                          : "the baseline's t_D (not measured for this arm)";
        if (!(m.drafterMs < m.cycleMs)) {
            throw SpeedModelError(cell.arm, cell.promptLen,
                                  "the drafter time " + ms(m.drafterMs) +
                                      " is not shorter than the cycle T = τ(k)/D = " +
                                      formatGeneral(m.tokensPerVerify.back(), 5) + " / " +
                                      formatGeneral(m.measuredTokS, 5) + " tok/s = " + ms(m.cycleMs));
        }
        const auto fit = noSpec.find(cell.promptLen);
        if (fit != noSpec.end()) {
            m.noSpeculationArm = fit->second->arm;
            m.noSpeculationTokS = fit->second->metric(benchmetric::kDecodeTokS)->mean;
            m.verifyMs = 1000.0 / m.noSpeculationTokS;
            m.verifyMsPerToken = (m.cycleMs - m.drafterMs - m.verifyMs) / m.k;
            anyFitted = true;
            if (m.verifyMsPerToken < 0) {
                model.warnings.push_back(
                    {BenchWarningKind::Approximation,
                     {},
                     0,
                     speedModelCellName(cell.arm, cell.promptLen) +
                         ": the verify cost per token v = " + ms(m.verifyMsPerToken) +
                         " is negative (a cycle minus the drafter time is shorter than a "
                         "step without speculation, 1/D₀ = " +
                         ms(m.verifyMs) + "); check the drafter time and the arm without speculation"});
            }
        } else {
            m.verifyMs = m.cycleMs - m.drafterMs;
            anyDefault = true;
        }
        const double stepMs = m.drafterMs / draftStepsPerCycle(model.kind, m.k);
        m.predictedTokS =
            rates(m.tokensPerVerify, m.verifyMs, m.verifyMsPerToken, model.kind, stepMs, &m.cycleMsByK);
        m.bestK = bestOf(m.predictedTokS);

        if (cell.arm == report.baselineArm && model.savingMs) {
            SpeedModelQuantized q;
            q.savingMs = *model.savingMs;
            q.drafterMs = m.drafterMs - q.savingMs;
            q.cycleMs = m.cycleMs - q.savingMs;
            q.predictedTokS = 1000.0 * m.tokensPerVerify.back() / q.cycleMs;
            q.predictedChange = q.predictedTokS / m.measuredTokS - 1.0;
            q.predictedTokSByK = rates(m.tokensPerVerify, m.verifyMs, m.verifyMsPerToken, model.kind,
                                       q.drafterMs / draftStepsPerCycle(model.kind, m.k));
            q.bestK = bestOf(q.predictedTokSByK);
            const auto* other = quantizedArm.empty() ? nullptr : report.cell(quantizedArm, cell.promptLen);
            if (other && other->acceptance.k() > 0) {
                const auto& measuredAcceptance = checkedAcceptance(*other);
                if (static_cast<int>(measuredAcceptance.size()) != m.k) {
                    model.warnings.push_back(
                        {BenchWarningKind::SkippedInput,
                         {},
                         0,
                         speedModelCellName(other->arm, other->promptLen) +
                             " ran with k = " + std::to_string(measuredAcceptance.size()) +
                             ", the baseline with k = " + std::to_string(m.k) +
                             ": not compared with the prediction"});
                } else {
                    SpeedModelMeasured meas;
                    meas.arm = other->arm;
                    meas.measuredTokS = measuredRate(*other);
                    meas.measuredChange = meas.measuredTokS / m.measuredTokS - 1.0;
                    meas.residual = meas.measuredTokS / q.predictedTokS - 1.0;
                    meas.tokensPerVerify = tokensPerVerify(measuredAcceptance).back();
                    meas.predictedTokS = 1000.0 * meas.tokensPerVerify / q.cycleMs;
                    meas.predictedChange = meas.predictedTokS / m.measuredTokS - 1.0;
                    meas.residualMeasuredAcceptance = meas.measuredTokS / meas.predictedTokS - 1.0;
                    q.measured = meas;
                }
            }
            m.quantized = std::move(q);
        }
        model.cells.push_back(std::move(m));
    }

    // The assumptions, in words, next to the numbers.
    auto& a = model.assumptions;
    a.push_back(
        std::string("Drafter: ") + drafterKindName(model.kind) + " (" + model.kindBasis + "). " +
        (model.kind == DrafterKind::Block
             ? "One draft forward per verify cycle (n(j) = 1); acceptance measured at k is an approximation "
               "for j < k, because the block attends to itself."
             : "k sequential draft steps per verify cycle (n(j) = j); acceptance measured at k is exact for "
               "every j < k."));
    const bool quantizedArmCells = !quantizedArm.empty() && model.savingMs;
    a.push_back("Drafter time t_D = " + ms(tD) + " per verify cycle (profiled, given) for the baseline '" +
                report.baselineArm + "'; other arms are assumed to have the same t_D" +
                (quantizedArmCells ? ", except the quantized arm '" + quantizedArm +
                                         "' with t_D − Δ = " + ms(tD - *model.savingMs) + "."
                                   : std::string(".")));
    if (anyDefault) {
        a.push_back(
            "Verify cost v = 0: a bandwidth-bound verify of j+1 tokens costs what one token costs, so "
            "V₀ = T − t_D with T = τ(k)/D.");
    }
    if (anyFitted) {
        a.push_back(
            "Verify cost fitted where an arm without speculation was measured at the same prompt length: "
            "V₀ = 1/D₀ and v = (T − t_D − V₀)/k.");
    }
    if (model.savingMs) {
        a.push_back("Quantized draft: Δ = " + ms(*model.savingMs) + " per cycle (" + model.savingBasis +
                    "); T′ = T − Δ, D′ = τ(k)/T′ with acceptance assumed unchanged" +
                    (quantizedArm.empty()
                         ? std::string(".")
                         : "; the quantized arm '" + quantizedArm +
                               "' is shown measured, with the prediction from its measured τ′."));
    }
    a.push_back(
        "Repeats pooled: D is the mean decode tok/s (1000/mean TPOT) over repeats; a_i = Σ accepted at "
        "position i / Σ drafts.");
    return model;
}

} // namespace spark
