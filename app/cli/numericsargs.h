#pragma once

#include "args.h"
#include "core/forward/draftforward.h"

namespace spark::cli {

/// @brief `--numerics fp32|bf16`: how a forward stores its activations (acceptance, perf --forward).
inline constexpr Option kNumericsOption{
    "numerics", "fp32|bf16", "fp32",
    "how the drafts store activations: fp32, or bf16 as vLLM serves a BF16 model (every operation's output "
    "rounded to BF16, FP32 inside)"};

/// @brief The numerics `--numerics` names (default fp32); another value is a usage error.
ForwardNumerics numericsFrom(const Args& args);

} // namespace spark::cli
