#pragma once

#include "args.h"
#include "core/plan/planoptions.h"

#include <string>
#include <vector>

namespace spark::cli {

/// @brief The plan options `plan`, `quantize`, `card` (and the other planning commands) share: --preset,
/// --target, --ignore, --scheme, --rounding, --target-layers, --bits, --group, --tp, --plan-file.
OptionTable planOptionTable();

/// @brief PlanOptions from parsed arguments (range-checked; UsageError otherwise). With --plan-file F the
/// plan file (core/plan/planfile.h) is the starting point: --target, --ignore, --scheme and --rounding
/// ENTRY=METHOD add entries after the file's (so a --scheme or --rounding rule wins over the file's rules),
/// --preset, --rounding METHOD, --target-layers, --bits, --group and --tp replace the file's values. Throws
/// PlanFileError naming the file and field when it cannot be read.
PlanOptions planOptionsFrom(const Args& args);

/// @brief With --save-plan F (an option only `plan` takes), writes @p options to F as a plan file,
/// atomically, replacing any file there.
void savePlanIfAsked(const Args& args, const PlanOptions& options);

} // namespace spark::cli
