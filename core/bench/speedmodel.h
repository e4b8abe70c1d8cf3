#pragma once

#include "core/bench/benchreport.h"
#include "core/bench/speedmodelresult.h"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace spark {

/// @brief What the speed model needs besides the measured cells (speed-model.md §1, §4).
struct SpeedModelOptions
{
    double drafterMs = 0; ///< t_D: the baseline draft's time per verify cycle, ms (profiled); > 0
    DrafterKind kind = DrafterKind::Chain;
    std::string kindBasis = "given"; ///< how the kind was chosen, for the assumptions
    /// Δ per cycle when the user gives it; wins over streamed bytes.
    std::optional<double> savingMs;
    /// S and S′: bytes one draft step streams before and after quantization (a plan's sizes, gathers
    /// excluded); used when both are non-zero and no saving is given: Δ = t_D·(1 − S′/S).
    std::uint64_t streamedBefore = 0;
    std::uint64_t streamedAfter = 0;
    /// The arm measured with the quantized draft. Default: the first arm after the baseline, in its setup,
    /// that has speculation. Its cells use t_D − Δ as their drafter time.
    std::optional<std::string> quantizedArm;
};

/// @brief Inconsistent inputs. what() names the cell ("arm 'x' at prompt length 2048: ...") where one
/// is at fault.
class SpeedModelError : public std::runtime_error
{
  public:
    SpeedModelError(std::string arm, long long promptLen, const std::string& problem);

    const std::string& arm() const { return m_arm; }
    long long promptLen() const { return m_promptLen; }

  private:
    std::string m_arm;
    long long m_promptLen = 0;
};

/// @brief "arm 'x' at prompt length 2048" (or "arm 'x'" when the length is unknown).
std::string speedModelCellName(const std::string& arm, long long promptLen);

/// @brief The speed model of speed-model.md §2–§4 for every cell of @p report with speculation: a_i,
/// τ(j), T, the verify/draft split (v fitted when an arm without speculation was measured at the same
/// prompt length, else 0), D(j) and k*; on the baseline's cells, with a saving or streamed bytes, T′,
/// D′, D′(j), k′* and the comparison with the quantized arm when it was measured.
/// @throws SpeedModelError for a_i increasing, a drafter time not shorter than a cycle, k unknown (drafts
/// without per-position acceptance, or a declared k that disagrees), a cell without decode tok/s, a
/// saving larger than the drafter time, or an unknown quantized arm.
SpeedModel computeSpeedModel(const BenchReport& report, const SpeedModelOptions& options);

} // namespace spark
