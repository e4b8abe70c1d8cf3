#pragma once

#include "core/forward/acceptance.h"
#include "core/forward/capturehealth.h"
#include "core/forward/layeridprobe.h"
#include "core/plan/planoptions.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief An offline acceptance run as a user asks for it (the CLI's `acceptance` and the GUI's panel).
struct AcceptanceJob
{
    std::filesystem::path draft;       ///< the BF16 draft
    std::filesystem::path capture;     ///< capture file or folder of per-sequence files
    CaptureReadOptions captureOptions; ///< layer ids and prompt length the capture does not record
    std::filesystem::path target;      ///< empty: the draft ships everything it reads
    /// A compressed-tensors checkpoint of the draft to compare (read through the bit-exact dequantizer) ...
    std::filesystem::path quantized;
    /// ... or, without one, the plan applied in memory. Neither: the BF16 draft alone.
    std::optional<PlanOptions> plan;
    AcceptanceOptions options;
    bool replay = false; ///< the online loop per draft instead of sampled paired anchors
    ForwardNumerics numerics = ForwardNumerics::Fp32; ///< how both drafts store their activations
    /// Also run the BF16 draft under the other numerics on the same anchors (paired runs): the noise floor
    /// that kernel numerics alone put under every Δ.
    bool numericsFloor = false;
};

/// @brief The BF16 draft under the job's numerics against itself under the other numerics, on the job's
/// anchors: how often kernel numerics alone change a proposal.
struct NumericsFloor
{
    ForwardNumerics other = ForwardNumerics::Bf16Activations;
    double firstDiffers = 0;   ///< share of anchors whose first proposal differs
    double anyDiffers = 0;     ///< share of anchors with any of the k proposals different
    AcceptanceSummary summary; ///< paired: "quantized" is the draft under the other numerics
};

/// @brief What a run found.
struct AcceptanceRun
{
    DraftSpec spec;
    std::string baseName = "BF16";
    std::string quantizedName; ///< "W4A16 (plan, in memory)", the checkpoint's folder name, or empty
    std::int64_t eligibleAnchors = 0;
    std::vector<Anchor> anchors;         ///< the anchors evaluated (paired runs)
    std::vector<AnchorOutcome> outcomes; ///< paired runs: one per anchor
    AcceptanceSummary summary;           ///< paired (or BF16 alone)
    /// Replay: each draft's own loop (its own anchors, unpaired), its summary and every cycle it visited.
    std::optional<AcceptanceSummary> replayBase, replayQuantized;
    std::vector<AnchorOutcome> replayBaseCycles, replayQuantizedCycles;
    std::uint64_t streamedBefore = 0, streamedAfter = 0; ///< bytes per draft step (in-memory plan only)
    std::vector<CaptureFinding> captureWarnings;         ///< what the capture check warned of
    /// What the BF16 draft's near-zero position-0 acceptance usually means (lowAcceptanceHint()), or empty.
    std::string lowAcceptance;
    /// The BF16 draft's position-0 acceptance with the capture's ids shifted by ±1, when the capture holds
    /// the layers for it (probeLayerIds()).
    std::optional<LayerIdProbe> layerIdProbe;
    std::optional<NumericsFloor> numericsFloor; ///< when the job asked for it
    std::string samplingNote;   ///< samplingContextNote() of the capture at the job's temperature
    bool promptUnknown = false; ///< CaptureInfo::promptUnknown: say promptUnknownNote() with its remedy
};

/// @brief What a capture that does not say where its prompts end does to the figures (each front end adds
/// how to give the prompt length).
std::string promptUnknownNote();

/// @brief What checking a capture before a run finds: its health and, with the job's draft, the layer-id
/// probe the run makes, so that the check and the run never disagree.
struct CaptureReview
{
    CaptureInfo info;
    CaptureHealth health;
    std::optional<LayerIdProbe> layerIds;
};

/// @brief Reads @p job's capture (as the run reads it when the job names a draft) and reviews it;
/// @p progress counts the health check's samples.
CaptureReview reviewCapture(const AcceptanceJob& job, const ProgressFn& progress = {});

/// @brief The drafts of a job, ready to run: the BF16 forward and, when asked, the quantized one.
struct AcceptanceDrafts
{
    std::shared_ptr<const Checkpoint> draft, target;
    DraftSpec spec;
    std::optional<DraftForward> base, quantized;
    std::string baseName = "BF16"; ///< the draft's folder name when it is itself a quantized export
    std::string quantizedName;
    std::optional<QuantPlan> plan;
    /// Set when the capture needs the target's tokens recomputed (not greedy, no target_argmax).
    std::shared_ptr<const TargetHead> targetHead;

    /// @brief The job's options with the target head attached.
    AcceptanceOptions options(const AcceptanceOptions& base) const
    {
        AcceptanceOptions o = base;
        o.targetHead = targetHead.get();
        return o;
    }
};

/// @brief Opens the job's checkpoints and capture and builds the forwards; every input problem is an
/// IoError or ForwardInputError naming the file and field, raised before any heavy work.
AcceptanceDrafts openAcceptanceDrafts(const AcceptanceJob& job, const HiddenStateCapture& capture);

/// @brief The target model the job reads: the one named, else the `target/` a demo capture has beside it.
std::filesystem::path jobTarget(const AcceptanceJob& job);

/// @brief How the job's capture is read: its options completed for its draft and target
/// (captureOptionsFor()).
CaptureReadOptions jobCaptureOptions(const AcceptanceJob& job);
/// @brief The job's capture, read so.
HiddenStateCapture openJobCapture(const AcceptanceJob& job);

/// @brief Runs the job: anchors sampled from the capture (or the replayed loop), both drafts, statistics.
AcceptanceRun runAcceptance(const AcceptanceJob& job);

/// @brief One decision unit's cost when it alone is quantized (the rest BF16).
struct UnitSensitivity
{
    std::string unit;                 ///< vLLM name of the unit (fused set)
    std::vector<std::string> modules; ///< its checkpoint modules
    std::string scheme;
    double tauDelta = 0, tauDeltaLow = 0, tauDeltaHigh = 0;
    double deltaFirst = 0; ///< a_0(Q) − a_0(B)
    double flipFirst = 0;  ///< flip rate at position 0
};

/// @brief Per-unit sensitivity: every unit the job's plan quantizes, alone, on the job's anchors; sorted by
/// acceptance cost (largest loss first). Needs an in-memory plan.
std::vector<UnitSensitivity> runSensitivity(const AcceptanceJob& job);

/// @brief The sensitivity file `plan --alpha-from` reads.
nlohmann::ordered_json sensitivityJson(const AcceptanceJob& job, const std::vector<UnitSensitivity>& units);

} // namespace spark
