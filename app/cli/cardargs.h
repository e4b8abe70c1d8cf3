#pragma once

#include "args.h"
#include "core/export/modelcardinputs.h"

#include <string>
#include <vector>

namespace spark::cli {

/// @brief The model-card options `quantize` and `card` share: --model-name, --base-model, --license,
/// --target-model, --target-precision, --bench FILE (repeatable: benchmark results to include).
OptionTable cardOptionTable();

/// @brief CardOptions from parsed arguments; imports and summarizes the --bench files (first arm with
/// "bf16" in its name is the baseline).
CardOptions cardOptionsFrom(const Args& args);

/// @brief The --target-model value that is an existing folder: the target model's checkpoint, which
/// `quantize --gptq` reads the tensors a draft shares with its target from. Empty when none is.
std::string targetModelFolder(const Args& args);

} // namespace spark::cli
