#pragma once

#include "core/io/checkpoint.h"
#include "core/plan/planoptions.h"
#include "core/progress.h"
#include "core/quant/roundingmethod.h"
#include "core/quant/weightscheme.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief One (scheme, rounding method) a decision unit may take, with what it costs and what it does to the
/// weights. The rounding changes the error only: every method writes the same on-disk format.
struct SweepCandidate
{
    const WeightScheme* scheme = &keepScheme();
    const RoundingMethod* rounding = &rtnRounding(); ///< rtn for BF16
    std::uint64_t streamedBytes =
        0;                   ///< bytes of the unit's weights one draft step streams (gathers excluded)
    std::uint64_t bytes = 0; ///< bytes of the unit's weights in the checkpoint (scales, shapes included)
    double sqErr = 0;        ///< Σ (W - D)² over the unit's weights (float64); 0 for BF16
    double relErr = 0;       ///< sqrt(sqErr / sqNorm) of the unit; 0 for BF16 and all-zero weights
};

/// @brief A decision unit as vLLM decides it: one Linear, or a fused q/k/v or gate/up set.
struct SweepUnit
{
    std::string name;                 ///< the vLLM name, "model.layers.5.mlp.gate_up_proj"
    std::string leaf;                 ///< "gate_up_proj", "o_proj", "fc": what role priors key on
    std::vector<std::string> modules; ///< checkpoint modules, "layers.0.mlp.gate_proj", ...
    std::vector<std::string> weights; ///< their weight tensors
    double sqNorm = 0;                ///< Σ W² over the unit's weights; 0 until measured
    /// The schemes the allocator may choose from, cheapest first after measuring: BF16 and every candidate
    /// that is legal for the unit (shape gate, vLLM limits, raw weight reads, the device's kernels). A fixed
    /// unit has exactly one.
    std::vector<SweepCandidate> candidates;
    /// Non-empty when the allocator may not change the unit: why (it can only stay BF16, or a --scheme or
    /// --ignore entry of the user names it).
    std::string fixedReason;
    const WeightScheme* baseScheme = &keepScheme();      ///< the scheme of the plan without a budget
    const RoundingMethod* baseRounding = &rtnRounding(); ///< its rounding (rtn when it keeps BF16)
    /// Non-empty when a --rounding ENTRY=METHOD rule of the user names the unit: its candidates all take
    /// that method.
    std::string roundingPinnedBy;
    std::vector<std::string> excluded; ///< "NVFP4A16: shape: ..." for each candidate left out

    bool fixed() const { return !fixedReason.empty(); }
    /// @brief The candidate with @p scheme and @p rounding (ignored for BF16), nullptr when it is not one.
    const SweepCandidate* candidate(const WeightScheme* scheme,
                                    const RoundingMethod* rounding = &rtnRounding()) const;
};

/// @brief What to sweep.
struct SweepOptions
{
    PlanOptions plan;                            ///< the plan the budget starts from (preset, tp, user rules)
    std::vector<const WeightScheme*> candidates; ///< empty: every product scheme
    std::string device;                          ///< "", "gb10" or "h200": only schemes with a kernel there
    /// Rounding methods each quantizing candidate is also measured under (rtn and the plan's own are always
    /// measured): with mse and range the allocator chooses a scheme and a rounding per unit. Searching
    /// methods cost a range search and an error pass per (unit, scheme) each.
    std::vector<const RoundingMethod*> roundings;
    /// The draft's own lm_head is a unit too, where vLLM can load it quantized (EAGLE-3; elsewhere it stays
    /// BF16 and the unit is fixed). Off by default: weight error says nothing about what a head's error does
    /// to the logits, so only the acceptance objective offers it.
    bool includeLmHead = false;
    unsigned threads = 0; ///< 0: every core
    /// A unit whose weights fit here is read once into memory (NVFP4 needs the set's absmax before any
    /// error); a larger one is read twice when NVFP4 is a candidate.
    std::uint64_t unitBufferBytes = std::uint64_t{768} << 20;
};

/// @brief The sensitivity of every decision unit to every legal candidate scheme.
struct SweepResult
{
    PlanOptions plan;                            ///< the options the units and legality come from
    std::vector<const WeightScheme*> candidates; ///< the schemes that were asked for (plus the base plan's)
    /// The rounding methods offered to every free unit, rtn first (a unit pinned by a rounding rule is
    /// measured under its own method only).
    std::vector<const RoundingMethod*> roundings;
    std::string device;
    std::vector<SweepUnit> units; ///< every Linear decision unit, in vLLM-name order
    /// Bytes of the plan without a budget that are not a unit's Linear weights: norms, biases, embeddings,
    /// heads. A plan's totals are these plus every unit's chosen candidate (a fixed unit's only one).
    std::uint64_t streamedFixed = 0;
    std::uint64_t bytesFixed = 0;
    std::uint64_t streamedBefore = 0; ///< the checkpoint as it is (drafter-time predictions scale from it)
    std::uint64_t bytesMeasured = 0;  ///< weight bytes read by the sweep
    double seconds = 0;               ///< wall time of the measurement
    bool measured = false;
};

/// @brief Device ids the sweep knows ("gb10", "h200"), for usage text.
std::string sweepDeviceNames();

/// @brief The decision units of a draft and the legal candidates of each, from config.json and the tensor
/// headers alone (nothing measured yet). Legality is makePlan's own: a candidate is legal for a unit when a
/// plan assigning it to every unit quantizes that unit with it. Throws std::invalid_argument for a bad
/// option (unknown device; a plan with errors names them).
SweepResult prepareSweep(const nlohmann::json& config, const std::vector<TensorInfo>& tensors,
                         const SweepOptions& options);

/// @brief Measures every candidate of every unit: each weight is read once and all rtn candidates run on each
/// block while it is in cache; a searching rounding then reads the unit again per scheme, for its range
/// search (modulecontexts.h, exactly the exporter's ranges) and its error pass. @p progress counts weight
/// bytes; returning false cancels (IoError Cancelled). A NaN/Inf weight throws QuantError naming the file
/// and tensor.
void measureSweep(const Checkpoint& checkpoint, SweepResult& sweep, const SweepOptions& options,
                  const ProgressFn& progress = {});

/// @brief prepareSweep() then measureSweep().
SweepResult sweepCheckpoint(const Checkpoint& checkpoint, const SweepOptions& options,
                            const ProgressFn& progress = {});

/// @brief Parses "W4A16,NVFP4A16,..." (BF16 is always a candidate and may be omitted); throws
/// std::invalid_argument naming an unknown scheme.
std::vector<const WeightScheme*> parseCandidates(const std::string& list);
/// @brief Parses "rtn,mse,range" (rtn is always measured and may be omitted); throws std::invalid_argument
/// naming an unknown method.
std::vector<const RoundingMethod*> parseRoundingCandidates(const std::string& list);
/// @brief The entry a scheme or rounding rule names @p unit by: an anchored regex on its vLLM name, or the
/// exact "lm_head" (vLLM quantizes a ParallelLMHead only through that exact target).
std::string unitEntry(const SweepUnit& unit);
/// @brief "W4A16" for rtn, "W4A16+mse" otherwise: how a candidate is named in tables and messages.
std::string candidateLabel(const SweepCandidate& candidate);

} // namespace spark
