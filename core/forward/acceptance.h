#pragma once

#include "core/forward/draftforward.h"
#include "core/forward/hiddenstatecapture.h"
#include "core/forward/targethead.h"
#include "core/progress.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace spark {

/// @brief One verify cycle to evaluate: the position of its bonus token in a captured sequence.
struct Anchor
{
    std::int64_t sample = 0;
    std::int64_t position = 0;

    bool operator==(const Anchor&) const = default;
    auto operator<=>(const Anchor&) const = default;
};

/// @brief What one draft proposed at one anchor and how much of it the target accepts.
struct DraftOutcome
{
    int accepted = 0;                 ///< L: the longest prefix equal to the target's tokens
    std::vector<std::int64_t> tokens; ///< k proposals
    /// At a temperature T > 0, per position j: α_j, the probability that the target sampling at T accepts
    /// proposal j given the captured tokens before it (draft-forward.md §12). Empty at T = 0.
    std::vector<double> acceptance;
    /// With AcceptanceOptions::scoreTemperatures, per draft temperature t and position j: q_t(y_j), the
    /// draft's probability of the target's token, fed the captured tokens before it (draft-forward.md §13).
    std::vector<std::vector<double>> targetProbability;
    std::vector<float> topMargin;  ///< per position: top-1 minus top-2 logit
    std::vector<float> confidence; ///< DSpark's confidence head, per position (empty without one)
};

/// @brief Both drafts at one anchor (paired), with the target's tokens and KL(B‖Q) per position.
struct AnchorOutcome
{
    Anchor anchor;
    std::vector<std::int64_t> targets; ///< y_1..y_k
    DraftOutcome base;                 ///< the BF16 draft
    std::optional<DraftOutcome> quantized;
    /// KL(p_B ‖ p_Q) per position over the draft vocabulary (FP64 sums); NaN where the two drafts' earlier
    /// proposals differ (the distributions then condition on different prefixes).
    std::vector<double> kl;
};

/// @brief The reference draft's proposals at a list of anchors, kept between evaluateAnchors() calls on the
/// same anchors: scoring many quantized variants against one reference then runs the reference (its contexts
/// and its query blocks) once per anchor list. It holds the reference logits, anchors · k · draft-vocabulary
/// floats (1.2 MB per anchor for a 154880-token head at k = 2), up to a limit; a list that would pass it is
/// not kept. Use one per reference draft, k and feed. Thread-safe.
class ReferenceProposals
{
  public:
    explicit ReferenceProposals(std::uint64_t maxBytes = std::uint64_t{1} << 30) : m_maxBytes(maxBytes) {}

    /// The batches stored for @p anchors in batches of @p batch, or nullptr.
    std::shared_ptr<const std::vector<Proposals>> find(const std::vector<Anchor>& anchors,
                                                       std::size_t batch) const;
    /// Whether a list of @p bytes would still be kept.
    bool hasRoomFor(std::uint64_t bytes) const;
    void store(const std::vector<Anchor>& anchors, std::size_t batch, std::vector<Proposals> batches);

  private:
    mutable std::mutex m_mutex;
    std::uint64_t m_maxBytes, m_bytes = 0;
    std::map<std::pair<std::vector<Anchor>, std::size_t>, std::shared_ptr<const std::vector<Proposals>>>
        m_runs;
};

/// @brief How the draft chooses its tokens when the target samples (vLLM's `draft_sample_method`).
enum class DraftSampling {
    Greedy,        ///< the draft's argmax, accepted with probability p_T(x)
    Probabilistic, ///< sampled from the draft at T, accepted by standard rejection sampling
};
/// @brief "greedy" or "probabilistic"; parseDraftSampling() throws std::invalid_argument on others.
const char* draftSamplingName(DraftSampling sampling);
DraftSampling parseDraftSampling(const std::string& name);

/// @brief Options of an offline acceptance run.
struct AcceptanceOptions
{
    int k = 2;                    ///< proposals per verify cycle (num_speculative_tokens)
    std::int64_t anchorCount = 0; ///< anchors sampled (0: every eligible anchor)
    std::uint64_t seed = 0;
    std::int64_t batchAnchors = 64; ///< anchors per forward pass (memory: activations and logits)
    unsigned threads = 0;
    ProgressFn progress; ///< anchors done / total
    /// The temperature the target samples at: 0 counts greedy acceptance; T > 0 gives every proposal its
    /// acceptance probability under the target's distribution at T (needs targetHead).
    double temperature = 0;
    DraftSampling drafting = DraftSampling::Greedy; ///< at T > 0
    /// At T = 0: the draft temperatures the target-aware objective is evaluated at (draft-forward.md §13).
    /// Both drafts are then fed the captured tokens (ProposalFeed::CapturedTokens): on a greedy capture the
    /// accepted counts and flips are those of the serving loop, and KL conditions on the target's tokens.
    std::vector<double> scoreTemperatures;
    /// Recomputes the target's tokens of a capture that is not greedy and stores no target_argmax, and its
    /// distribution at a temperature.
    const TargetHead* targetHead = nullptr;
    /// The base draft's proposals from an earlier paired run on the same anchors, reused; a run that finds
    /// none stores its own.
    ReferenceProposals* reference = nullptr;
};

/// @brief What a run at @p temperature should say of the contexts @p info's capture holds, or empty: a
/// greedy capture's contexts are greedy text, which the target sampling at T does not write, and acceptance
/// measured on them is biased (draft-forward.md §12).
std::string samplingContextNote(const CaptureInfo& info, double temperature);

/// @brief Anchors whose bonus token and k following tokens are all generated by the target (loss mask) and
/// whose targets exist, in (sample, position) order. At a temperature the captured tokens are the targets.
std::vector<Anchor> eligibleAnchors(const HiddenStateCapture& capture, int k, double temperature = 0);

/// @brief The distinct samples of @p anchors, in increasing order.
std::vector<std::int64_t> samplesOf(const std::vector<Anchor>& anchors);

/// @brief The anchors of one captured sample, in the order given, with where each stands in the caller's
/// list. Every anchor loop (paired acceptance, logit dumps, Hessian capture) builds one context per sample
/// and proposes for that sample's anchors in batches.
struct SampleAnchors
{
    std::int64_t sample = 0;
    std::vector<std::int64_t> positions;
    std::vector<std::size_t> indices; ///< indices[i]: where positions[i] stands in the anchors given
    /// The context every anchor of the sample needs: up to the last of them.
    std::int64_t contextLength() const;
    /// Calls @p visit(batch, first) for consecutive batches of at most @p size positions; first is the
    /// batch's offset in positions.
    template <typename Visit> void forEachBatch(std::size_t size, Visit&& visit) const
    {
        size = std::max<std::size_t>(1, size);
        for (std::size_t first = 0; first < positions.size(); first += size) {
            const auto end = std::min(positions.size(), first + size);
            visit(std::vector<std::int64_t>(positions.begin() + static_cast<std::ptrdiff_t>(first),
                                            positions.begin() + static_cast<std::ptrdiff_t>(end)),
                  first);
        }
    }
};

/// @brief @p anchors grouped by sample, samples in increasing order.
std::vector<SampleAnchors> anchorsBySample(const std::vector<Anchor>& anchors);

/// @brief @p count anchors drawn without replacement from @p eligible with a fixed generator seeded by
/// @p seed (the same seed gives the same anchors on every machine), sorted; all of them when count is 0 or
/// exceeds the pool.
std::vector<Anchor> sampleAnchors(const std::vector<Anchor>& eligible, std::int64_t count,
                                  std::uint64_t seed);

/// @brief Checks the capture against the draft (layer ids by value, hidden size, targets available) and
/// returns the capture slots of the draft's aux layers. Throws ForwardInputError naming file and field. A
/// capture that is not greedy needs target_argmax or, with @p haveTargetHead, its last layer.
std::vector<int> matchCapture(const HiddenStateCapture& capture, const DraftSpec& spec,
                              bool haveTargetHead = false);

/// @brief Runs @p base (and @p quantized when given) at every anchor, paired: same anchors, same context.
/// The outcomes come back in the order of @p anchors. Throws IoError(Cancelled) when progress says stop.
std::vector<AnchorOutcome> evaluateAnchors(const DraftForward& base, const DraftForward* quantized,
                                           const HiddenStateCapture& capture,
                                           const std::vector<Anchor>& anchors,
                                           const AcceptanceOptions& options);

/// @brief The online loop replayed on the captured tokens for one draft: per sample, the first eligible
/// anchor, then anchor_{n+1} = anchor_n + L_n + 1 while the next cycle still fits, L counting the proposals
/// equal to the target's tokens (at a temperature the captured tokens: on a capture the target sampled at
/// that temperature this simulates the online loop with a greedy draft; every cycle also carries its α_j).
/// Returns every cycle visited.
std::vector<AnchorOutcome> replayLoop(const DraftForward& draft, const HiddenStateCapture& capture,
                                      const AcceptanceOptions& options);

/// @brief Per-position statistics of a run (draft-forward.md §6, §12).
struct PositionStats
{
    /// a_i(B) with a 95% interval: greedy, the share of anchors accepting i + 1 proposals (Wilson); at a
    /// temperature, the mean of ∏_{j≤i} α_j (normal).
    double acceptBase = 0, acceptBaseLow = 0, acceptBaseHigh = 0;
    double acceptQuant = 0, acceptQuantLow = 0, acceptQuantHigh = 0;
    double delta = 0, deltaLow = 0, deltaHigh = 0; ///< a_i(Q) − a_i(B), paired, 95% normal interval
    /// Anchors where B's first i+1 tokens equal the target's (at a temperature, the captured tokens).
    std::int64_t baseAccepted = 0;
    double countedBase = 0, countedQuant = 0; ///< at a temperature: those counts' shares (the replay's a_i)
    double flipRate = 0;   ///< among those, the share where Q's first i+1 tokens differ from B's
    double lowerBound = 0; ///< a_i(B) · (1 − flipRate) ≤ a_i(Q) (greedy counts only)
    double meanKl = 0;     ///< over anchors with equal earlier proposals
    std::int64_t klAnchors = 0;
    double marginP10 = 0, marginP50 = 0, marginP90 = 0; ///< B's top-2 logit margin
    double confidenceBase = 0, confidenceQuant = 0;     ///< mean confidence head (DSpark), else 0
};

/// @brief The target-aware objective of a run at one draft temperature: the mean over anchors of
/// expectedAccepted(), per draft, and the paired difference with its 95 % normal interval.
struct ObjectiveStats
{
    double temperature = 0;
    double base = 0, quant = 0;
    double delta = 0, deltaLow = 0, deltaHigh = 0;
};

/// @brief The summary of a paired (or single-draft) run.
struct AcceptanceSummary
{
    std::int64_t anchors = 0;
    int k = 0;
    bool paired = false;
    bool sampled = false; ///< from α_j (a run at a temperature), not greedy counts
    std::vector<PositionStats> positions;
    double tauBase = 0, tauQuant = 0;                       ///< 1 + Σ a_i
    double tauDelta = 0, tauDeltaLow = 0, tauDeltaHigh = 0; ///< paired: mean(L_Q − L_B) with its 95% interval
    std::vector<ObjectiveStats> objective;                  ///< per AcceptanceOptions::scoreTemperatures
};

/// @brief Statistics of @p outcomes (the quantized columns only when every outcome has a quantized draft),
/// from their α_j when they carry them (a run at a temperature), else from the greedy counts; with
/// @p scoreTemperatures (those of the run's options) the objective at each.
AcceptanceSummary summarizeAcceptance(const std::vector<AnchorOutcome>& outcomes, int k,
                                      std::span<const double> scoreTemperatures = {});
/// @brief The share of proposal @p i accepted at one anchor: ∏_{j≤i} α_j at a temperature, else 1 or 0.
double acceptedShare(const DraftOutcome& outcome, int i);

/// @brief Writes the first @p count anchors' positions, both drafts' proposals [M, k] and logits [M, k, V]
/// (F32, draft vocabulary) to @p path as safetensors, by running the drafts again on those anchors.
void dumpLogits(const std::filesystem::path& path, const DraftForward& base, const DraftForward* quantized,
                const HiddenStateCapture& capture, const std::vector<Anchor>& anchors, int k);

} // namespace spark
