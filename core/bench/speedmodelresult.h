#pragma once

#include "core/bench/benchwarning.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief How a drafter spends a verify cycle (speed-model.md §1): `chain` drafters (EAGLE-3) run k
/// sequential draft steps, `block` drafters (DFlash, DSpark) one forward for the whole block.
enum class DrafterKind { Chain, Block };

/// @brief "chain" or "block".
const char* drafterKindName(DrafterKind kind);
/// @brief The kind called @p name ("chain", "block"), nullopt otherwise.
std::optional<DrafterKind> parseDrafterKind(std::string_view name);
/// @brief Draft steps per cycle at j speculative tokens: n(j) = j for chain, 1 for block (j ≥ 1), n(0) = 0.
int draftStepsPerCycle(DrafterKind kind, int j);

/// @brief The quantized draft compared with an arm measured with it (speed-model.md §4, last points).
struct SpeedModelMeasured
{
    std::string arm;                       ///< the quantized draft's arm at the same prompt length
    double measuredTokS = 0;               ///< its measured decode tok/s D
    double measuredChange = 0;             ///< D_measured / D − 1
    double residual = 0;                   ///< D_measured / D′ − 1, D′ with acceptance unchanged
    double tokensPerVerify = 0;            ///< τ′(k) from the arm's measured acceptance
    double predictedTokS = 0;              ///< τ′(k) / T′
    double predictedChange = 0;            ///< (τ′(k) / T′) / D − 1
    double residualMeasuredAcceptance = 0; ///< D_measured / (τ′(k) / T′) − 1
};

/// @brief The prediction for a quantized draft on one baseline cell (speed-model.md §4).
struct SpeedModelQuantized
{
    double savingMs = 0;                  ///< Δ = t_D − t′_D per cycle
    double drafterMs = 0;                 ///< t′_D
    double cycleMs = 0;                   ///< T′ = T − Δ
    double predictedTokS = 0;             ///< D′ = τ(k) / T′ (acceptance unchanged)
    double predictedChange = 0;           ///< D′ / D − 1
    std::vector<double> predictedTokSByK; ///< D′(j), j = 0..k
    int bestK = 0;                        ///< k′* = argmax D′(j), ties to the smaller j
    std::optional<SpeedModelMeasured> measured;
};

/// @brief The speed model of one cell (arm, prompt length) with speculation (speed-model.md §2–§3).
struct SpeedModelCell
{
    std::string arm;
    long long promptLen = 0;
    int k = 0;
    std::vector<double> acceptance;      ///< a_i, i = 0..k−1
    std::vector<double> tokensPerVerify; ///< τ(j) = 1 + Σ_{i<j} a_i, j = 0..k
    double measuredTokS = 0;             ///< D: the cell's mean decode tok/s
    double cycleMs = 0;                  ///< T = τ(k) / D
    double drafterMs = 0;                ///< t_D per cycle
    std::string drafterBasis;            ///< where t_D came from, in words
    double verifyMs = 0;                 ///< V₀
    double verifyMsPerToken = 0;         ///< v
    std::string noSpeculationArm;        ///< the k = 0 arm that fitted v, empty when v = 0 by default
    double noSpeculationTokS = 0;        ///< its D₀
    std::vector<double> cycleMsByK;      ///< T(j), j = 0..k
    std::vector<double> predictedTokS;   ///< D(j) = τ(j) / T(j), j = 0..k
    int bestK = 0;                       ///< k* = argmax D(j), ties to the smaller j
    std::optional<SpeedModelQuantized> quantized; ///< on the baseline's cells, with a plan or a saving

    /// @brief t_D / T.
    double drafterShare() const { return cycleMs > 0 ? drafterMs / cycleMs : 0.0; }
};

/// @brief The speed model of every cell with speculation, and what it assumed.
struct SpeedModel
{
    double drafterMs = 0; ///< t_D of the baseline draft, per verify cycle
    DrafterKind kind = DrafterKind::Chain;
    std::string kindBasis;            ///< "DSpark architecture", "given", "assumed: architecture unknown"
    std::optional<double> savingMs;   ///< Δ when a plan or a saving was given
    std::string savingBasis;          ///< "given" or the plan's streamed bytes
    std::uint64_t streamedBefore = 0; ///< S (0 when the saving was given)
    std::uint64_t streamedAfter = 0;  ///< S′
    std::string baselineArm;
    std::vector<SpeedModelCell> cells; ///< in the report's cell order
    /// The model's assumptions in words, for every front end and the model card.
    std::vector<std::string> assumptions;
    std::vector<BenchWarning> warnings;

    /// @brief The cell of @p arm at @p promptLen, or nullptr.
    const SpeedModelCell* cell(const std::string& arm, long long promptLen) const;
};

} // namespace spark
