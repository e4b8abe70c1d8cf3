#pragma once

#include "args.h"
#include "core/forward/hiddenstatecapture.h"

namespace spark::cli {

/// @brief What a capture may not record itself: --layer-ids ID,ID,... and --prompt-tokens N.
OptionTable captureReadOptionTable();

/// @brief CaptureReadOptions from parsed arguments; UsageError naming the option for a bad value.
CaptureReadOptions captureReadOptionsFrom(const Args& args);

} // namespace spark::cli
