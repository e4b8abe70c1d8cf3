#include "core/allocate/acceptanceobjective.h"

#include "core/forward/capturehealth.h"
#include "core/forward/expectedacceptance.h"
#include "core/io/ioerror.h"
#include "core/util/statistics.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

namespace spark {

struct AcceptanceObjective::State
{
    HiddenStateCapture capture;
    AcceptanceDrafts drafts;
    std::vector<TensorInfo> tensors;
    /// The BF16 draft's proposals on each anchor list measured so far: every candidate is paired with the
    /// same reference, so it runs once per list.
    ReferenceProposals reference;
};

namespace {

/// The options of the plan that gives @p unit the candidate @p c and leaves every other unit as the sweep's
/// plan has it (only the unit's modules are applied, so the others do not matter).
PlanOptions candidateOptions(const SweepResult& sweep, const SweepUnit& unit, const SweepCandidate& c)
{
    auto options = sweep.plan;
    if (!unit.fixed()) {
        options.schemes.push_back(unitEntry(unit) + "=" + std::string(c.scheme->name));
        if (unit.roundingPinnedBy.empty()) {
            options.roundings.push_back(unitEntry(unit) + "=" + std::string(c.rounding->name));
        }
    }
    return options;
}

} // namespace

const char* acceptanceLossName(AcceptanceLoss loss)
{
    return loss == AcceptanceLoss::ExpectedAcceptance ? "expected-acceptance" : "kl";
}

AcceptanceLoss parseAcceptanceLoss(const std::string& name)
{
    for (const auto l : {AcceptanceLoss::ExpectedAcceptance, AcceptanceLoss::Kl}) {
        if (name == acceptanceLossName(l)) {
            return l;
        }
    }
    throw std::invalid_argument("loss '" + name + "': expected-acceptance or kl");
}

double UnitEffects::lossOf(const AcceptanceEffect& e) const
{
    if (loss == AcceptanceLoss::Kl) {
        return e.kl;
    }
    return -e.objectiveLow;
}

std::vector<bool> screenSurvivors(const SweepUnit& unit, const std::vector<double>& losses)
{
    const auto* keep = unit.candidate(unit.baseScheme, unit.baseRounding);
    const auto n = unit.candidates.size();
    std::vector<bool> survives(n, false);
    for (const bool streamed : {true, false}) {
        std::vector<std::size_t> order(n);
        for (std::size_t i = 0; i < n; ++i) {
            order[i] = i;
        }
        const auto cost = [&](std::size_t i) {
            return streamed ? unit.candidates[i].streamedBytes : unit.candidates[i].bytes;
        };
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return cost(a) != cost(b) ? cost(a) < cost(b) : losses[a] < losses[b];
        });
        double best = INFINITY;
        for (const auto i : order) {
            if (losses[i] < best) {
                survives[i] = true;
                best = losses[i];
            }
        }
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (!unit.candidates[i].scheme->quantizes() || &unit.candidates[i] == keep) {
            survives[i] = true;
        }
    }
    return survives;
}

AcceptanceAllocatorInput acceptanceAllocatorInput(const SweepResult& sweep, const UnitEffects& effects)
{
    if (effects.perUnit.size() != sweep.units.size()) {
        throw std::invalid_argument("the unit effects were measured on another sweep");
    }
    AcceptanceAllocatorInput in;
    in.sweep = sweep;
    for (std::size_t u = 0; u < sweep.units.size(); ++u) {
        auto& unit = in.sweep.units[u];
        auto& losses = in.losses.perUnit.emplace_back();
        std::vector<SweepCandidate> kept;
        for (std::size_t c = 0; c < unit.candidates.size(); ++c) {
            if (effects.survived[u][c]) {
                kept.push_back(unit.candidates[c]);
                losses.push_back(effects.lossOf(effects.perUnit[u][c]));
            }
        }
        unit.candidates = std::move(kept);
    }
    return in;
}

PairedDifference pairedDifference(const PlanAcceptance& a, const PlanAcceptance& b)
{
    if (a.reportAccepted.size() != b.reportAccepted.size()) {
        throw std::invalid_argument("the two plans were reported on different anchors");
    }
    std::vector<double> d;
    for (std::size_t i = 0; i < a.reportAccepted.size(); ++i) {
        d.push_back(a.reportAccepted[i] - b.reportAccepted[i]);
    }
    const auto interval = pairedMeanInterval(d);
    PairedDifference out;
    out.anchors = static_cast<std::int64_t>(d.size());
    out.mean = interval.mean;
    out.low = interval.low;
    out.high = interval.high;
    return out;
}

AcceptanceObjective::AcceptanceObjective(AcceptanceObjectiveInputs inputs) : m_inputs(std::move(inputs))
{
    if (m_inputs.k < 1) {
        throw std::invalid_argument("k must be at least 1");
    }
    AcceptanceJob job;
    job.draft = m_inputs.draft;
    job.capture = m_inputs.capture;
    job.captureOptions = m_inputs.captureOptions;
    job.target = m_inputs.target;
    job.options.k = m_inputs.k;
    job.options.threads = m_inputs.threads;
    auto capture = openJobCapture(job);
    auto drafts = openAcceptanceDrafts(job, capture);
    if (drafts.draft->config().contains("quantization_config")) {
        throw std::invalid_argument(
            m_inputs.draft.string() +
            ": already quantized; an acceptance-driven plan starts from the BF16 draft");
    }
    auto tensors = drafts.draft->tensorInfos();
    m_state = std::unique_ptr<State>(
        new State{std::move(capture), std::move(drafts), std::move(tensors), ReferenceProposals{}});
    const auto eligible = eligibleAnchors(m_state->capture, m_inputs.k);
    if (eligible.empty()) {
        throw ForwardInputError(m_state->capture.info().path.string(), "loss_mask",
                                "no anchor has its bonus token and the " + std::to_string(m_inputs.k) +
                                    " following tokens inside the generated region");
    }
    m_split = splitAnchors(eligible, m_inputs.anchors);
    // The confirm anchors hold the screen's; the check reads what scoring and reporting read.
    auto read = m_split.confirm;
    read.insert(read.end(), m_split.report.begin(), m_split.report.end());
    m_captureWarnings = requireHealthySamples(m_state->capture, samplesOf(read));
}

AcceptanceObjective::~AcceptanceObjective() = default;
AcceptanceObjective::AcceptanceObjective(AcceptanceObjective&&) noexcept = default;

const CaptureInfo& AcceptanceObjective::captureInfo() const
{
    return m_state->capture.info();
}

AcceptanceEffect AcceptanceObjective::measure(const QuantPlan& plan, const std::vector<std::string>* modules,
                                              const std::vector<Anchor>& anchors, const ProgressFn& progress,
                                              std::vector<int>* accepted, AcceptanceSummary* summary) const
{
    const auto& s = *m_state;
    DraftWeights weights(s.drafts.draft, s.drafts.target);
    if (modules) {
        weights.applyPlan(plan, *modules);
    } else {
        weights.applyPlan(plan);
    }
    const DraftForward quantized(s.drafts.spec, std::move(weights), m_inputs.threads);
    return effectOf(quantized, anchors, progress, accepted, summary);
}

AcceptanceEffect AcceptanceObjective::measureNumericsFloor(const ProgressFn& progress) const
{
    const auto& s = *m_state;
    DraftForward served(s.drafts.spec, s.drafts.base->weights(), m_inputs.threads);
    served.setNumerics(ForwardNumerics::Bf16Activations);
    return effectOf(served, m_split.report, progress, nullptr, nullptr);
}

AcceptanceEffect AcceptanceObjective::effectOf(const DraftForward& other, const std::vector<Anchor>& anchors,
                                               const ProgressFn& progress, std::vector<int>* accepted,
                                               AcceptanceSummary* summary) const
{
    const auto& s = *m_state;
    AcceptanceOptions options;
    options.k = m_inputs.k;
    options.threads = m_inputs.threads;
    options.batchAnchors = m_inputs.batchAnchors;
    options.progress = progress;
    options.reference = &m_state->reference;
    options.scoreTemperatures = {kObjectiveTemperature};
    const auto outcomes =
        evaluateAnchors(*s.drafts.base, &other, s.capture, anchors, s.drafts.options(options));
    const auto stats = summarizeAcceptance(outcomes, m_inputs.k, options.scoreTemperatures);
    AcceptanceEffect e;
    e.anchors = static_cast<std::int64_t>(outcomes.size());
    for (const auto& p : stats.positions) {
        e.kl += p.meanKl;
    }
    e.tauDelta = stats.tauDelta;
    e.tauDeltaLow = stats.tauDeltaLow;
    e.tauDeltaHigh = stats.tauDeltaHigh;
    if (!stats.objective.empty()) {
        e.objective = stats.objective.front().delta;
        e.objectiveLow = stats.objective.front().deltaLow;
        e.objectiveHigh = stats.objective.front().deltaHigh;
    }
    std::int64_t flips = 0;
    for (const auto& o : outcomes) {
        flips += o.base.tokens.front() != o.quantized->tokens.front() ? 1 : 0;
        if (accepted) {
            accepted->push_back(o.quantized->accepted);
        }
    }
    e.flipFirst = outcomes.empty() ? 0 : static_cast<double>(flips) / static_cast<double>(outcomes.size());
    if (summary) {
        *summary = stats;
    }
    return e;
}

UnitEffects AcceptanceObjective::measureUnits(const SweepResult& sweep, const ProgressFn& progress) const
{
    const auto start = std::chrono::steady_clock::now();
    const auto& s = *m_state;
    UnitEffects out;
    out.loss = m_inputs.loss;
    out.screenAnchors = static_cast<std::int64_t>(m_split.screen.size());
    out.confirmAnchors = static_cast<std::int64_t>(m_split.confirm.size());
    std::uint64_t screenRuns = 0;
    for (const auto& unit : sweep.units) {
        out.perUnit.emplace_back(unit.candidates.size());
        for (const auto& c : unit.candidates) {
            screenRuns += c.scheme->quantizes() ? 1 : 0;
        }
    }
    // The total grows to its final value once the screen has said how many survive.
    std::uint64_t total = 2 * screenRuns, done = 0;
    const auto step = [&] {
        if (!reportProgress(progress, done++, total)) {
            throw IoError(IoErrorKind::Cancelled, "", "acceptance scoring cancelled");
        }
    };
    const auto run = [&](const SweepUnit& unit, const SweepCandidate& c, const std::vector<Anchor>& anchors) {
        step();
        const auto plan = makePlan(s.drafts.draft->config(), s.tensors, candidateOptions(sweep, unit, c));
        if (!plan.errors.empty()) {
            throw std::invalid_argument(unit.name + " as " + candidateLabel(c) + ": " + plan.errors.front());
        }
        return measure(plan, &unit.modules, anchors, {});
    };
    for (std::size_t u = 0; u < sweep.units.size(); ++u) {
        const auto& unit = sweep.units[u];
        for (std::size_t c = 0; c < unit.candidates.size(); ++c) {
            if (unit.candidates[c].scheme->quantizes()) {
                out.perUnit[u][c] = run(unit, unit.candidates[c], m_split.screen);
                ++out.measuredOnScreen;
            }
        }
    }
    const bool confirmIsScreen = m_split.confirm == m_split.screen;
    std::uint64_t confirmRuns = 0;
    for (std::size_t u = 0; u < sweep.units.size(); ++u) {
        const auto& unit = sweep.units[u];
        std::vector<double> losses;
        for (const auto& e : out.perUnit[u]) {
            losses.push_back(out.lossOf(e));
        }
        out.survived.push_back(screenSurvivors(unit, losses));
        for (std::size_t c = 0; c < unit.candidates.size(); ++c) {
            confirmRuns += !confirmIsScreen && out.survived[u][c] && unit.candidates[c].scheme->quantizes();
        }
    }
    total = screenRuns + confirmRuns;
    for (std::size_t u = 0; u < sweep.units.size() && !confirmIsScreen; ++u) {
        const auto& unit = sweep.units[u];
        for (std::size_t c = 0; c < unit.candidates.size(); ++c) {
            if (out.survived[u][c] && unit.candidates[c].scheme->quantizes()) {
                out.perUnit[u][c] = run(unit, unit.candidates[c], m_split.confirm);
                ++out.measuredOnConfirm;
            }
        }
    }
    reportProgress(progress, total, total);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

AcceptanceEffect AcceptanceObjective::measureSelection(const QuantPlan& plan, AcceptanceSummary* summary,
                                                       const ProgressFn& progress) const
{
    if (!plan.errors.empty()) {
        throw std::invalid_argument("plan error: " + plan.errors.front());
    }
    return measure(plan, nullptr, m_split.confirm, progress, nullptr, summary);
}

PlanAcceptance AcceptanceObjective::measurePlan(const QuantPlan& plan, const ProgressFn& progress) const
{
    if (!plan.errors.empty()) {
        throw std::invalid_argument("plan error: " + plan.errors.front());
    }
    const auto first = m_split.confirm.size();
    const auto total = first + m_split.report.size();
    const auto offset = [&](std::uint64_t base) -> ProgressFn {
        if (!progress) {
            return {};
        }
        return [&progress, base, total](std::uint64_t done, std::uint64_t) {
            return progress(base + done, total);
        };
    };
    PlanAcceptance out;
    out.streamedBytes = plan.sizes.streamedAfter;
    out.bytes = plan.sizes.bytesAfter;
    out.confirm = measure(plan, nullptr, m_split.confirm, offset(0));
    out.report =
        measure(plan, nullptr, m_split.report, offset(first), &out.reportAccepted, &out.reportSummary);
    return out;
}

} // namespace spark
