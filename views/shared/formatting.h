#pragma once

#include "core/plan/draftmodule.h"
#include "core/quant/roundingmethod.h"
#include "core/quant/weightscheme.h"

#include <QString>
#include <cstdint>

namespace spark {

/// @brief "512 B", "1.50 KiB", "7,21 GiB": binary units like the CLI, decimals in the user's locale.
QString localizedBytes(std::uint64_t bytes);
/// @brief "1,048,576" in the user's locale.
QString formatCount(std::uint64_t count);
/// @brief "linear", "norm", "embedding", "head", "buffer" (the spelling of the CLI and plan files).
QString roleText(ModuleRole role);
/// "W8A16", "NVFP4A16": a scheme's name for display.
QString schemeText(const WeightScheme& scheme);
/// "rtn", "mse", "range": a rounding method's name for display (and for PlanOptions::rounding).
QString roundingText(const RoundingMethod& method);
/// @brief "W4A16" under rtn (or none), "W4A16 · mse" under another method: a quantized module's choice.
QString schemeAndRoundingText(const WeightScheme& scheme, const RoundingMethod* rounding);
/// @brief A rounding method's one-line summary, for tooltips.
QString roundingSummary(const RoundingMethod& method);
/// @brief A 0..1 fraction as "12.34 %".
QString formatShare(double share);
/// @brief A relative error ‖W − Q(W)‖ / ‖W‖ as a percentage with three significant digits ("15.9 %",
/// "1.23 %", "0.0456 %"). The one spelling of rel. error in the GUI: tables, detail panel, plan.
QString formatRelError(double relError);
/// @brief A duration for a person: "42 s", "3 min 05 s".
QString formatDuration(double seconds);

} // namespace spark
