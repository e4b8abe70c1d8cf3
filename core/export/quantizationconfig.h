#pragma once

#include "core/plan/quantplan.h"

#include <nlohmann/json.hpp>

namespace spark {

/// @brief The compressed-tensors version whose schema the written quantization_config matches.
inline constexpr const char* kCompressedTensorsSchemaVersion = "0.12.2";

/// @brief quantization_config for @p plan in the "compat" variant of format-spec §3: the llm-compressor
/// layout without `scale_dtype`/`zp_dtype` (vLLM builds bundling compressed-tensors <= 0.12 reject them),
/// one config group per (scheme, rounding) with its own `format` (QuantPlan::groups) and the rounding's
/// `observer` ("minmax", "memoryless_mse"; range: "minmax" + kRoundingKwarg in observer_kwargs), the
/// top-level `format` shared by every group or "mixed-precision" (schemes-spec §4), `ignore` from the plan.
nlohmann::json quantizationConfig(const QuantPlan& plan);

/// @brief The output config.json: @p source with `quantization_config` added at the top level and, for
/// speculators-format drafts (whose vLLM hf_config is rebuilt from transformer_layer_config), inside
/// `transformer_layer_config` too (format-spec §3 "Placement", §7.6).
nlohmann::json exportedConfig(const nlohmann::json& source, const QuantPlan& plan);

} // namespace spark
