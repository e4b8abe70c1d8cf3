#pragma once

#include "args.h"
#include "core/plan/planoptions.h"

#include <string>
#include <vector>

namespace spark::cli {

/// @brief The plan options `plan` and `quantize` share: --preset, --target, --ignore, --target-layers,
/// --bits, --group, --tp.
const std::vector<std::string>& planOptionNames();

/// @brief PlanOptions from parsed arguments (range-checked; UsageError otherwise).
PlanOptions planOptionsFrom(const Args& args);

} // namespace spark::cli
