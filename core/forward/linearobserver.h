#pragma once

#include "core/forward/activations.h"

#include <cstdint>
#include <string>

namespace spark {

/// @brief Sees the input of every Linear a DraftForward applies: GPTQ's calibration hook (hessiancapture.h).
class LinearInputObserver
{
  public:
    virtual ~LinearInputObserver() = default;
    /// @brief Rows [@p firstRow, firstRow + @p rowCount) of the weight of @p module are about to be applied
    /// to @p input ([tokens, cols]). @p module is the checkpoint module name: "layers.0.self_attn.q_proj",
    /// "fc", "lm_head", "markov_head.markov_w2", a fused Laguna "layers.0.self_attn.qkv_proj" (then once per
    /// q, k and v row range). A whole module is firstRow 0, rowCount = its rows. Called on the forward's
    /// calling thread, before the product.
    virtual void observe(const std::string& module, std::int64_t firstRow, std::int64_t rowCount,
                         const Activations& input) = 0;
};

} // namespace spark
