#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spark {

struct WeightScheme;

/// @brief How a candidate range of a group is scored by a searching rounding method.
enum class RoundingError {
    DTypeLp, ///< llm-compressor's error: sum of |Q(w) - w|^n per element in the weight dtype (rounding.md
             ///< §1.2)
    F32L2,   ///< Sparkulator's: sum of f32((Q(w) - w)^2), accumulated in f64
    /// (Q(w) - w)ᵀ H_gg (Q(w) - w) in f64, H_gg the group's diagonal block of the module's input Hessian
    /// XᵀX from a capture (rounding.md §6): the error the group adds to the module's output on the
    /// captured inputs, cross-group terms left out.
    HessianBlock,
};

/// @brief How the scale (and zero point) of each group is chosen, orthogonal to the scheme: every method
/// yields CT parameters of the same on-disk format, and the codes are CT's RTN codes under them
/// (rounding.md §1.2 step 5). The methods are data: the search engine (roundingsearch.h) reads the grid,
/// patience and error rule from here, nothing branches on a method's name.
struct RoundingMethod
{
    std::string_view name;     ///< "rtn", "mse", "range", "codes", "hessian" (CLI, plan files, GUI)
    std::string_view observer; ///< the config group's `weights.observer` (vLLM ignores it)
    std::string_view summary;  ///< one line for --help and tooltips
    /// Candidates per end: shrink factor p_i = 1 - i / grid, i = 0 .. steps-1, applied as
    /// rnd_dtype(f32(m) * f32(p_i)) to the group's min(w, 0) and max(w, 0). 0: no search (RTN).
    int steps = 0;
    double grid = 100.0;
    /// The search stops after this many consecutive steps in which no group of the whole tensor improved
    /// (llm-compressor's global patience); 0: every step runs.
    int patience = 0;
    RoundingError error = RoundingError::DTypeLp;
    double norm = 2.4; ///< the exponent of DTypeLp, rounded to the weight dtype as PyTorch's pow does
    /// Asymmetric schemes: after the joint search, min and max are refined one at a time (range only).
    bool independentEnds = false;
    /// Reproduced bit for bit from llm-compressor + compressed-tensors (false: Sparkulator-defined).
    bool ctExact = true;
    /// Instead of a range: every block's stored FP8 scale code is searched exhaustively for the least
    /// f32 L2 error of its values, under compressed-tensors' global scale and value rounding, so the codes
    /// stay CT's nearest codes under the stored scales (`codes`; schemes whose codec stores block-scale
    /// codes only, SchemeCodec::searchesScaleCodes).
    bool scaleCodeSearch = false;

    /// @brief A range search (steps > 0).
    bool searches() const { return steps > 0; }
    /// @brief Plain round-to-nearest under each group's min-max range: neither a range nor a code search.
    bool isRtn() const { return !searches() && !scaleCodeSearch; }
    /// @brief The scales depend on a capture's input Hessians (`hessian`): only a calibration pass can
    /// choose them, and verify can only check that the stored ones are among the search's candidates.
    bool needsHessian() const { return error == RoundingError::HessianBlock; }
    /// @brief Whether the method can round a weight under @p scheme (a scale-code search needs stored
    /// block-scale codes); quantizing schemes only.
    bool appliesTo(const WeightScheme& scheme) const;
    /// @brief The shrink factor of step @p i as the candidates use it: f32(1 - i / grid) (a double first).
    float shrink(int i) const { return static_cast<float>(1.0 - static_cast<double>(i) / grid); }
};

/// @brief The `weights.observer_kwargs` key that marks a Sparkulator-defined method (ctExact false) in a
/// config group: its observer stays "minmax" (no llm-compressor observer computes it, and vLLM ignores both
/// fields), and `{"sparkulator_rounding": "range"}` lets verify, compare and check tell it from RTN.
inline constexpr std::string_view kRoundingKwarg = "sparkulator_rounding";
/// @brief The `weights.observer_kwargs` key whose value "gptq" marks a config group whose codes GPTQ solved
/// from a capture (ConfigGroup::gptq). Ignored by vLLM and compressed-tensors, like every observer kwarg.
inline constexpr std::string_view kCodesKwarg = "sparkulator_codes";

/// @brief Every rounding method, in the order users see them: rtn, mse, range, codes, hessian.
const std::vector<RoundingMethod>& roundingMethods();
/// @brief The method called @p name (case-insensitive), nullptr when unknown.
const RoundingMethod* findRoundingMethod(std::string_view name);
/// @brief Round-to-nearest under the min-max range (today's behaviour; the default).
const RoundingMethod& rtnRounding();
/// @brief "rtn, mse, range, codes, hessian" for usage and error messages.
std::string roundingMethodNames();

} // namespace spark
