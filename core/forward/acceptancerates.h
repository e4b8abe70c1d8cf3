#pragma once

#include "core/forward/acceptancejob.h"

#include <nlohmann/json.hpp>
#include <optional>

namespace spark {

/// @brief Which draft's acceptance to hand to the serving stack.
enum class RatesOf { Bf16, Quantized };

/// @brief The per-position acceptance of a finished run as vLLM's synthetic rejection sampler takes it:
/// `speculative_config` holds `rejection_sample_method` "synthetic", `num_speculative_tokens` k and
/// `synthetic_acceptance_rates`, entry i the share of verify cycles whose first i + 1 proposals were all
/// accepted (unconditional, so non-increasing, in [0, 1], k entries: what vLLM's SpeculativeConfig checks),
/// to be merged with the draft's method and model; `source` says which draft, k and how it was measured.
/// @p of: the quantized draft's rates when one ran, else the BF16 draft's; a replayed run gives each draft's
/// own loop. Throws std::invalid_argument when the quantized draft's rates are asked for and none ran.
nlohmann::ordered_json acceptanceRatesJson(const AcceptanceJob& job, const AcceptanceRun& run,
                                           std::optional<RatesOf> of = std::nullopt);

} // namespace spark
