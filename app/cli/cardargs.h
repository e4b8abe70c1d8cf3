#pragma once

#include "args.h"
#include "core/export/modelcardinputs.h"

#include <string>
#include <vector>

namespace spark::cli {

/// @brief The model-card options `quantize` and `card` share: --model-name, --base-model, --license,
/// --target-model, --target-precision, --bench FILE (repeatable: benchmark results to include).
const std::vector<std::string>& cardOptionNames();

/// @brief CardOptions from parsed arguments; imports and summarizes the --bench files (first arm with
/// "bf16" in its name is the baseline).
CardOptions cardOptionsFrom(const Args& args);

} // namespace spark::cli
