#pragma once

#include <QString>
#include <optional>
#include <vector>

namespace spark {

struct RoundingMethod;
struct WeightScheme;

/// @brief The per-tensor results that arrive after opening: the plan's decision and the quantization
/// error from analyze. Empty until a stage fills it.
struct TensorRowResult
{
    QString decision;               ///< e.g. "W4A16" or "keep"; empty: no plan yet
    std::optional<double> relError; ///< ‖W − Q(W)‖ / ‖W‖
    std::optional<double> maxError; ///< max |W − Q(W)|
    /// Σw² and Σ(w − Q(w))² (float64): a fused set's error is sqrt(Σ sqErr / Σ sqNorm) over its members.
    std::optional<double> sqNorm = std::nullopt; // initialized: older brace lists stop at maxError
    std::optional<double> sqErr = std::nullopt;
    /// Filled by plannedErrors() for the weight of a module the plan quantizes with a scheme other than the
    /// analysis': the scheme relError belongs to, measured by the Budget tab's sweep.
    QString sweptScheme = {};
    bool sweptUnit = false; ///< relError is the fused set's (q/k/v, gate/up), all its members together
    /// The planned scheme when neither the analysis nor the sweep measured it (the cell says so).
    QString unmeasuredScheme = {};
    QString rounding = {}; ///< the planned rounding method of a quantized module ("mse"); empty: rtn
    /// The preset's ignore entry that keeps the module BF16 (its decision is not the user's to toggle).
    QString presetKeptBy = {};
    /// The scheme and rounding the analysis measured relError under (null: unknown, the analysis' own).
    const WeightScheme* measuredScheme = nullptr;
    const RoundingMethod* measuredRounding = nullptr;
};

/// @brief Indexed like DocumentSnapshot::rows. Shared immutably between the document and its models;
/// an update produces a new table (copy-on-write), so a model never sees a half-written one.
using AnalysisTable = std::vector<TensorRowResult>;

/// @brief A partial update for one tensor: fields left empty keep their current value, so the plan
/// (decisions) and analyze (errors) can report independently.
struct TensorAnalysisUpdate
{
    QString tensor;
    std::optional<QString> decision;
    std::optional<double> relError;
    std::optional<double> maxError;
    std::optional<double> sqNorm = std::nullopt; // initialized: older brace lists stop at maxError
    std::optional<double> sqErr = std::nullopt;
    std::optional<QString> rounding = std::nullopt;     ///< with decision: the module's rounding ("" = rtn)
    std::optional<QString> presetKeptBy = std::nullopt; ///< with decision: the preset entry keeping it
    const WeightScheme* measuredScheme = nullptr;       ///< with the errors: what they were measured under
    const RoundingMethod* measuredRounding = nullptr;
};

} // namespace spark
