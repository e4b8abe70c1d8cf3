#pragma once

#include "core/forward/acceptance.h"
#include "core/forward/hiddenstatecapture.h"

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief The BF16 draft's position-0 acceptance with the capture's layer ids read one way.
struct LayerIdReading
{
    int shift = 0;        ///< the ids' true values are the recorded ones plus this
    std::vector<int> ids; ///< the capture's ids so read, in slot order
    double accept0 = 0;   ///< the share of anchors whose first proposal is accepted
};

/// @brief What the layer-id probe found: the ids as read, and shifted by ±1 where the capture holds the
/// layers that needs (engines number aux layers one apart: vLLM's id i is the input of layer i).
struct LayerIdProbe
{
    std::vector<LayerIdReading> readings; ///< as read first, then each shift tried
    std::int64_t anchors = 0;
    /// When a shift is clearly better (its paired gain's 95 % interval above 0): what it is; empty
    /// otherwise. Each front end says how to give suggestedLayerIds.
    std::string advice;
    std::vector<int> suggestedLayerIds;
};

/// @brief @p ids as a --layer-ids argument, "2,3,4".
std::string layerIdArgument(const std::vector<int>& ids);

/// @brief Runs the BF16 @p draft at k = 1 on @p anchorCount anchors of @p capture with the capture's ids as
/// read and shifted by ±1, when the capture holds the layers a shift needs (more layers than the draft
/// reads); nullopt when it holds none. @p readOptions reopen the capture with the shifted ids.
std::optional<LayerIdProbe> probeLayerIds(const DraftForward& draft, const HiddenStateCapture& capture,
                                          const CaptureReadOptions& readOptions,
                                          const AcceptanceOptions& options, std::int64_t anchorCount = 256);

} // namespace spark
