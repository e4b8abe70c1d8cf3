#pragma once

#include "core/bench/speedmodelresult.h"

#include <nlohmann/json.hpp>
#include <string>

namespace spark {

/// @brief @p value with @p significant digits, trailing zeros kept ("11.80", "100.6", "2.033").
std::string formatSignificant(double value, int significant = 4);
/// @brief A signed percentage of a fraction with 4 significant digits: "+8.523 %".
std::string formatChangePercent(double fraction);

/// @brief The `speed_model` object of one cell: k, acceptance_per_position, tokens_per_verify (τ(j)),
/// cycle_ms, drafter_ms, verify_ms_per_token (v), predicted_tok_s (D(j)), best_k, and on the baseline's
/// cells `quantized` (saving_ms, cycle_ms, predicted_tok_s, predicted_change_pct, predicted_tok_s_by_k,
/// best_k, and measured_tok_s / residual_pct when the quantized arm was measured).
nlohmann::ordered_json speedModelCellJson(const SpeedModelCell& cell);

/// @brief What the whole model assumed: drafter time and kind, saving and its basis, assumptions, warnings.
nlohmann::ordered_json speedModelJson(const SpeedModel& model);

/// @brief Markdown tables of the model (per cell: a_i, τ(k), T, t_D share, V₀, v, D(j) with k*; the
/// quantized prediction against the measurement) and the assumptions. Headings at @p headingLevel.
std::string speedModelMarkdown(const SpeedModel& model, int headingLevel = 2);

/// @brief The model card's section: predicted and measured change side by side per prompt length, with the
/// assumptions. Empty when the model made no prediction for a quantized draft.
std::string speedModelCardMarkdown(const SpeedModel& model, int headingLevel = 2);

} // namespace spark
