#pragma once

#include "core/io/checkpoint.h"
#include "core/progress.h"
#include "core/quant/roundingmethod.h"
#include "core/quant/schemecodec.h"
#include "core/quant/weightscheme.h"

#include <string>
#include <vector>

namespace spark {

/// @brief One quantized weight of a checkpoint whose SchemeContext is wanted.
struct ContextRequest
{
    const CheckpointTensor* weight = nullptr; ///< a 2-D BF16/F16/F32 weight of the source
    const WeightScheme* scheme = nullptr;     ///< a quantizing scheme
    const RoundingMethod* rounding = nullptr; ///< nullptr or rtn: no search
    /// Requests with the same non-empty key (a vLLM layer name) are one fused set: NVFP4's global scale is
    /// shared across it. An empty key is a set of its own.
    std::string fusedSet;
    /// A rounding whose scales depend on a capture (RoundingMethod::needsHessian) is not searched again:
    /// each group's range is the candidate of the method's grid whose scale is this stored weight_scale
    /// (storedranges.h). Null for such a method: the request fails, naming the capture it needs.
    const Checkpoint* storedIn = nullptr;
    const CheckpointTensor* storedScale = nullptr;
};

/// @brief The context of one request, or why there is none (a NaN/Inf weight: the message names the file
/// and tensor).
struct ModuleContext
{
    SchemeContext context;
    std::string error;
};

/// @brief What every reader of a quantized checkpoint must agree on to reproduce its bytes: for each
/// request the searched GroupRanges of its rounding method (streamed in row chunks, roundingsearch.h) and,
/// for NVFP4, the global scale of its fused set — from the source absmax under rtn, from the absmax of the
/// shrunk statistics under a searching method (llm-compressor's get_global_scale, rounding.md §1.2 step 4).
/// The exporter, verify, compare and analyze all call this, so they cannot drift apart. @p progress counts
/// source bytes read; returning false throws IoError (Cancelled). Results are in request order.
std::vector<ModuleContext> moduleContexts(const Checkpoint& source,
                                          const std::vector<ContextRequest>& requests, unsigned threads,
                                          const ProgressFn& progress = {});

} // namespace spark
