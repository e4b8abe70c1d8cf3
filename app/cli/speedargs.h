#pragma once

#include "args.h"
#include "core/bench/speedmodel.h"
#include "core/plan/quantplan.h"

#include <optional>
#include <string>
#include <vector>

namespace spark::cli {

/// @brief The speed-model options of `report`: --drafter-ms MS, --drafter-kind chain|block, --saving-ms MS,
/// --plan DRAFT_PATH with the plan options, --quantized-arm ARM.
OptionTable speedOptionTable();

/// @brief SpeedModelOptions from parsed arguments, nullopt without --drafter-ms. With --plan the draft's
/// headers are planned (makePlan) for its streamed bytes and architecture. UsageError for a saving or plan
/// without a drafter time, --saving-ms with --plan, plan options without --plan, or bad values.
std::optional<SpeedModelOptions> speedModelOptionsFrom(const Args& args);

/// @brief The speed-model options of `card`: --drafter-ms, --drafter-kind, --saving-ms, --quantized-arm.
OptionTable cardSpeedOptionTable();

/// @brief For `card`: SpeedModelOptions tied to the card's @p plan (its streamed bytes give the saving
/// unless --saving-ms is given; its architecture the kind unless --drafter-kind is); nullopt without
/// --drafter-ms. UsageError without --bench or for bad values.
std::optional<SpeedModelOptions> cardSpeedModelOptionsFrom(const Args& args, const QuantPlan& plan);

} // namespace spark::cli
