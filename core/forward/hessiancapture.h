#pragma once

// GPTQ's calibration statistics (rounding.md §2.2, §2.4): the BF16 draft's reference forward runs over a
// capture at the anchors offline acceptance uses, and a LinearInputObserver on every Linear accumulates XᵀX
// in FP64. Each module gets the inputs it sees when serving: q/k/v of a DFlash/DSpark layer see the query
// block and k/v also the context path; EAGLE-3's k/v see step 0 at every context position, q the k chained
// steps.

#include "core/forward/draftforward.h"
#include "core/forward/hiddenstatecapture.h"
#include "core/progress.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace spark {

/// @brief Σ x xᵀ over every input row that met rows [firstRow, firstRow + rowCount) of a weight.
struct HessianSlice
{
    std::int64_t firstRow = 0;
    std::int64_t rowCount = 0;
    std::int64_t cols = 0;
    std::int64_t tokens = 0; ///< input rows accumulated
    /// [cols, cols] row-major, full and exactly symmetric, FP64 sums, not normalized (GPTQ's damping is
    /// relative, so the scale does not matter).
    std::vector<double> xtx;
};

/// @brief Options of captureHessians().
struct HessianCaptureOptions
{
    std::int64_t samples = 0;               ///< captured sequences used, from the first (0: all)
    int k = 2;                              ///< draft steps per anchor, as served
    std::uint64_t memoryBytes = 8ull << 30; ///< the Hessians accumulated in one pass over the capture
    unsigned threads = 0;                   ///< the accumulation's threads (0: all cores)
    std::int64_t anchorsPerSample = 0;      ///< evenly spaced, the last one included (0: every eligible)
    ProgressFn progress;                    ///< anchors done / total over all passes; false cancels
    /// When set, each pass's Hessians are handed here as soon as the pass ends instead of being kept in
    /// the result, so memory holds one pass at a time (GPTQ solves them before the next pass).
    std::function<void(std::map<std::string, std::vector<HessianSlice>>&&)> onPass;
};

/// @brief The Hessians of the requested modules.
struct HessianCaptureResult
{
    /// By module name; one slice per row range the forward applies separately (a fused Laguna qkv_proj:
    /// q, k and v), ordered by firstRow.
    std::map<std::string, std::vector<HessianSlice>> modules;
    std::int64_t samples = 0; ///< sequences that gave at least one anchor
    std::int64_t anchors = 0; ///< anchors run per pass
    std::int64_t passes = 0;  ///< forwards over the capture (one per group of modules that fits memoryBytes)
    double seconds = 0;       ///< wall time of the whole capture
};

/// @brief Runs @p draft (the BF16 draft) at the eligible anchors (eligibleAnchors(capture, k)) of the first
/// options.samples sequences of @p capture, contexts and batches as evaluateAnchors builds them, and
/// accumulates XᵀX of the input of each module named in @p modules (checkpoint names, as
/// PlannedModule::name: "layers.0.mlp.down_proj", "fc", "lm_head"). A module the draft has but never applies
/// as a Linear (embed_tokens, markov_w1: gathers) or does not have gets no entry. When the Hessians
/// (cols²·8 bytes per slice) exceed options.memoryBytes the modules are split, in the order given, into
/// groups that fit and the forward runs once per group; the result holds every group's Hessians unless
/// options.onPass takes them.
/// The draft's observer is cleared on return. Throws std::invalid_argument naming a module whose Hessians
/// alone exceed memoryBytes, ForwardInputError naming the file when the capture does not fit the draft or
/// gives no anchor, IoError(Cancelled) when progress says stop.
HessianCaptureResult captureHessians(DraftForward& draft, const HiddenStateCapture& capture,
                                     const std::vector<std::string>& modules,
                                     const HessianCaptureOptions& options);

} // namespace spark
