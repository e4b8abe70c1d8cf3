#include "core/forward/acceptancejob.h"

#include "core/io/ioerror.h"
#include "core/plan/architecture.h"

#include <algorithm>
#include <limits>
#include <map>

namespace spark {
namespace {

QuantPlan planFor(const Checkpoint& draft, const PlanOptions& options)
{
    auto plan = makePlan(draft.config(), draft.tensorInfos(), options);
    if (!plan.errors.empty()) {
        throw std::invalid_argument("plan error: " + plan.errors.front());
    }
    return plan;
}

/// Pairs single-draft outcomes of the same anchors (per-unit runs reuse the BF16 outcomes).
std::vector<AnchorOutcome> paired(const std::vector<AnchorOutcome>& base,
                                  const std::vector<AnchorOutcome>& quant)
{
    std::vector<AnchorOutcome> out = base;
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i].quantized = quant[i].base;
        out[i].kl.assign(out[i].targets.size(), std::numeric_limits<double>::quiet_NaN());
    }
    return out;
}

std::vector<Anchor> jobAnchors(const AcceptanceJob& job, const HiddenStateCapture& capture,
                               std::int64_t& eligible)
{
    const auto all = eligibleAnchors(capture, job.options.k, job.options.temperature);
    eligible = static_cast<std::int64_t>(all.size());
    if (all.empty()) {
        throw ForwardInputError(capture.info().path.string(), "loss_mask",
                                "no anchor has its bonus token and the " + std::to_string(job.options.k) +
                                    " following tokens inside the generated region");
    }
    return sampleAnchors(all, job.options.anchorCount, job.options.seed);
}

} // namespace

std::filesystem::path jobTarget(const AcceptanceJob& job)
{
    return job.target.empty() ? targetBesideCapture(job.capture) : job.target;
}

AcceptanceDrafts openAcceptanceDrafts(const AcceptanceJob& job, const HiddenStateCapture& capture)
{
    AcceptanceDrafts d;
    d.draft = std::make_shared<const Checkpoint>(Checkpoint::open(job.draft));
    if (const auto target = jobTarget(job); !target.empty()) {
        d.target = std::make_shared<const Checkpoint>(Checkpoint::open(target));
    }
    d.spec = readDraftSpec(*d.draft);
    const auto& info = capture.info();
    const bool sampling = job.options.temperature > 0;
    if ((sampling || (!info.greedy && !info.hasTargetArgmax)) && d.target) {
        d.targetHead = std::make_shared<const TargetHead>(d.target, capture, job.options.threads);
    }
    matchCapture(capture, d.spec, d.targetHead != nullptr);
    DraftWeights baseWeights(d.draft, d.target);
    if (d.draft->config().contains("quantization_config")) {
        // A draft exported by any compressed-tensors tool runs as it is, dequantized bit-exactly.
        baseWeights.decodeQuantizedModules();
        d.baseName = d.draft->folder().filename().string();
    }
    d.base.emplace(d.spec, std::move(baseWeights), job.options.threads);
    d.base->setNumerics(job.numerics);
    if (!job.quantized.empty()) {
        const auto quantized = std::make_shared<const Checkpoint>(Checkpoint::open(job.quantized));
        // Another family's checkpoint would otherwise fail on the first tensor it lacks, as if damaged.
        const auto ours = detectArchitecture(d.draft->config());
        const auto theirs = detectArchitecture(quantized->config());
        if (theirs.kind != ours.kind) {
            throw ForwardInputError(quantized->folder().string(), "config.json architectures",
                                    "a " + theirs.displayName + " checkpoint, not a quantized " +
                                        ours.displayName + " draft like " +
                                        d.draft->folder().filename().string() +
                                        ": choose the export of this draft");
        }
        DraftWeights weights(quantized, d.target);
        weights.decodeQuantizedModules();
        d.quantized.emplace(d.spec, std::move(weights), job.options.threads);
        d.quantizedName = quantized->folder().filename().string();
    } else if (job.plan) {
        d.plan = planFor(*d.draft, *job.plan);
        DraftWeights weights(d.draft, d.target);
        weights.applyPlan(*d.plan);
        d.quantized.emplace(d.spec, std::move(weights), job.options.threads);
        d.quantizedName = d.plan->schemeSummary() + " (plan, in memory)";
    }
    if (d.quantized) {
        d.quantized->setNumerics(job.numerics);
    }
    return d;
}

CaptureReadOptions jobCaptureOptions(const AcceptanceJob& job)
{
    const auto draft = Checkpoint::open(job.draft);
    const auto path = jobTarget(job);
    if (path.empty()) {
        return captureOptionsFor(job.captureOptions, draft, nullptr);
    }
    const auto target = Checkpoint::open(path);
    return captureOptionsFor(job.captureOptions, draft, &target);
}

HiddenStateCapture openJobCapture(const AcceptanceJob& job)
{
    return HiddenStateCapture::open(job.capture, jobCaptureOptions(job));
}

namespace {

NumericsFloor numericsFloor(const AcceptanceJob& job, const AcceptanceDrafts& drafts,
                            const HiddenStateCapture& capture, const std::vector<Anchor>& anchors,
                            const AcceptanceOptions& options)
{
    NumericsFloor floor;
    floor.other =
        job.numerics == ForwardNumerics::Fp32 ? ForwardNumerics::Bf16Activations : ForwardNumerics::Fp32;
    DraftForward other(drafts.spec, drafts.base->weights(), job.options.threads);
    other.setNumerics(floor.other);
    AcceptanceOptions quiet = options;
    quiet.progress = nullptr;
    const auto outcomes = evaluateAnchors(*drafts.base, &other, capture, anchors, quiet);
    for (const auto& o : outcomes) {
        floor.firstDiffers += o.base.tokens.front() != o.quantized->tokens.front() ? 1 : 0;
        floor.anyDiffers += o.base.tokens != o.quantized->tokens ? 1 : 0;
    }
    const auto n = static_cast<double>(std::max<std::size_t>(outcomes.size(), 1));
    floor.firstDiffers /= n;
    floor.anyDiffers /= n;
    floor.summary = summarizeAcceptance(outcomes, job.options.k);
    return floor;
}

} // namespace

AcceptanceRun runAcceptance(const AcceptanceJob& job)
{
    AcceptanceRun run;
    const auto readOptions = jobCaptureOptions(job);
    const auto capture = HiddenStateCapture::open(job.capture, readOptions);
    auto drafts = openAcceptanceDrafts(job, capture);
    run.spec = drafts.spec;
    run.baseName = drafts.baseName;
    run.quantizedName = drafts.quantizedName;
    if (drafts.plan) {
        run.streamedBefore = drafts.plan->sizes.streamedBefore;
        run.streamedAfter = drafts.plan->sizes.streamedAfter;
    }
    const DraftForward* quantized = drafts.quantized ? &*drafts.quantized : nullptr;
    auto options = drafts.options(job.options);
    ReferenceProposals reference; // the floor pairs the BF16 draft with itself again: it runs once
    if (job.numericsFloor) {
        options.reference = &reference;
    }
    if (job.replay) {
        run.captureWarnings = requireHealthySamples(capture, {}); // the loop reads every sample
        run.eligibleAnchors = static_cast<std::int64_t>(
            eligibleAnchors(capture, job.options.k, job.options.temperature).size());
        run.replayBaseCycles = replayLoop(*drafts.base, capture, options);
        run.replayBase = summarizeAcceptance(run.replayBaseCycles, job.options.k);
        if (quantized) {
            run.replayQuantizedCycles = replayLoop(*quantized, capture, options);
            run.replayQuantized = summarizeAcceptance(run.replayQuantizedCycles, job.options.k);
        }
        run.summary = *run.replayBase;
    } else {
        run.anchors = jobAnchors(job, capture, run.eligibleAnchors);
        run.captureWarnings = requireHealthySamples(capture, samplesOf(run.anchors));
        run.outcomes = evaluateAnchors(*drafts.base, quantized, capture, run.anchors, options);
        run.summary = summarizeAcceptance(run.outcomes, job.options.k, job.options.scoreTemperatures);
        if (job.numericsFloor) {
            run.numericsFloor = numericsFloor(job, drafts, capture, run.anchors, options);
        }
    }
    run.samplingNote = samplingContextNote(capture.info(), job.options.temperature);
    if (!run.summary.positions.empty()) {
        run.lowAcceptance = lowAcceptanceHint(run.summary.positions.front().acceptBase);
    }
    run.layerIdProbe = probeLayerIds(*drafts.base, capture, readOptions, options);
    run.promptUnknown = capture.info().promptUnknown;
    return run;
}

std::string promptUnknownNote()
{
    return "the capture does not say where its prompts end: the target's tokens are recomputed at every "
           "position and the prompts' positions count as anchors too, so the rates are not those of "
           "generated text";
}

CaptureReview reviewCapture(const AcceptanceJob& job, const ProgressFn& progress)
{
    const auto readOptions = job.draft.empty() ? job.captureOptions : jobCaptureOptions(job);
    const auto capture = HiddenStateCapture::open(job.capture, readOptions);
    CaptureReview review;
    review.info = capture.info();
    review.health = checkCaptureHealth(capture, progress);
    if (!job.draft.empty() && !review.health.hasErrors()) {
        const auto drafts = openAcceptanceDrafts(job, capture);
        review.layerIds = probeLayerIds(*drafts.base, capture, readOptions, drafts.options(job.options));
    }
    return review;
}

std::vector<UnitSensitivity> runSensitivity(const AcceptanceJob& job)
{
    if (!job.plan || !job.quantized.empty()) {
        throw std::invalid_argument("per-unit sensitivity needs plan options (not --quantized)");
    }
    const auto capture = openJobCapture(job);
    auto drafts = openAcceptanceDrafts(job, capture);
    std::int64_t eligible = 0;
    const auto anchors = jobAnchors(job, capture, eligible);
    requireHealthySamples(capture, samplesOf(anchors));
    AcceptanceOptions options = drafts.options(job.options);
    options.progress = nullptr;
    const auto base = evaluateAnchors(*drafts.base, nullptr, capture, anchors, options);
    std::map<std::string, std::vector<const PlannedModule*>> units; // by vLLM name: a fused set is one unit
    for (const auto* m : drafts.plan->quantizedModules()) {
        units[m->vllmName].push_back(m);
    }
    std::vector<UnitSensitivity> out;
    std::uint64_t done = 0;
    for (const auto& [name, modules] : units) {
        if (!reportProgress(job.options.progress, done++, units.size())) {
            throw IoError(IoErrorKind::Cancelled, "", "per-unit sensitivity cancelled");
        }
        UnitSensitivity u;
        u.unit = name;
        u.scheme = std::string(modules.front()->scheme->name);
        for (const auto* m : modules) {
            u.modules.push_back(m->name);
        }
        DraftWeights weights(drafts.draft, drafts.target);
        weights.applyPlan(*drafts.plan, u.modules);
        DraftForward unitDraft(drafts.spec, std::move(weights), job.options.threads);
        unitDraft.setNumerics(job.numerics);
        const auto summary = summarizeAcceptance(
            paired(base, evaluateAnchors(unitDraft, nullptr, capture, anchors, options)), job.options.k);
        u.tauDelta = summary.tauDelta;
        u.tauDeltaLow = summary.tauDeltaLow;
        u.tauDeltaHigh = summary.tauDeltaHigh;
        u.deltaFirst = summary.positions.front().delta;
        u.flipFirst = summary.positions.front().flipRate;
        out.push_back(std::move(u));
    }
    reportProgress(job.options.progress, units.size(), units.size());
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.tauDelta < b.tauDelta; });
    return out;
}

nlohmann::ordered_json sensitivityJson(const AcceptanceJob& job, const std::vector<UnitSensitivity>& units)
{
    nlohmann::ordered_json j;
    j["format"] = "sparkulator-sensitivity";
    j["version"] = 1;
    j["draft"] = job.draft.string();
    j["capture"] = job.capture.string();
    j["k"] = job.options.k;
    j["anchors"] = job.options.anchorCount;
    j["seed"] = job.options.seed;
    j["units"] = nlohmann::ordered_json::array();
    for (const auto& u : units) {
        j["units"].push_back({{"unit", u.unit},
                              {"modules", u.modules},
                              {"scheme", u.scheme},
                              {"tau_delta", u.tauDelta},
                              {"tau_delta_ci", {u.tauDeltaLow, u.tauDeltaHigh}},
                              {"delta_first", u.deltaFirst},
                              {"flip_rate_first", u.flipFirst}});
    }
    return j;
}

} // namespace spark
