#pragma once

#include "core/plan/plannedmodule.h"

#include <string>
#include <vector>

namespace spark {

/// @brief The generated `ignore` list of a plan and how it checked out.
struct IgnoreList
{
    std::vector<std::string> entries;
    /// Empty when, under vLLM's rules (empty and standard packed_modules_mapping, older aliases), the
    /// entries select exactly the Linears kept BF16; otherwise what went wrong, naming the module.
    std::string error;
};

/// @brief Builds the ignore list for @p modules (format-spec §5.6): "lm_head"; for each kept Linear the
/// broadest suffix-anchored, dot-escaped regex that selects no quantized Linear ("re:.*\.(qkv|q|k|v)_proj$"),
/// else one entry per module with its layer index; then the non-Linear heads and embeddings present.
IgnoreList buildIgnoreList(const std::vector<PlannedModule>& modules);

} // namespace spark
