#pragma once

#include <string>
#include <string_view>

// The compact, suffix-anchored regexes written into `ignore` and config-group `targets` (format-spec
// §5.6, schemes-spec §4.3): they cover the fused vLLM name and its shards, with any layer offset.
namespace spark::nameregex {

/// @brief The last dotted component: "model.layers.3.mlp.gate_up_proj" → "gate_up_proj".
std::string leafOf(std::string_view name);

/// @brief "qkv_proj" → "(qkv|q|k|v)_proj": the fused leaf and its shards, so one entry works with and
/// without packed_modules_mapping (vllm#53116).
std::string leafAlternation(const std::string& leaf);

/// @brief "model.layers.36.self_attn.qkv_proj" → "re:.*\.layers\.36\.self_attn\.(qkv|q|k|v)_proj$".
std::string exactEntry(const std::string& vllmName);

/// @brief "model.layers.36.mlp.down_proj" → "re:.*\.down_proj$" (every layer's module of that leaf).
std::string leafEntry(const std::string& vllmName);

} // namespace spark::nameregex
