#pragma once

#include "core/forward/hiddenstatecapture.h"
#include "core/progress.h"

#include <filesystem>

namespace spark {

/// @brief Writes @p capture, whatever format it was read from, as the product's own capture file
/// (draft-forward.md §7) at @p out, atomically and one sequence at a time. BF16, F16 and F32 hidden states
/// keep their dtype and bits; FP8 ones are written dequantized (code · scale) as F32. The layer ids, the
/// generated region (as loss_mask), a stored target_argmax and what the capture says of its target go
/// with them. @p progress counts sequences; false cancels (IoError Cancelled, nothing written).
void convertCapture(const HiddenStateCapture& capture, const std::filesystem::path& out,
                    const ProgressFn& progress = {});

} // namespace spark
