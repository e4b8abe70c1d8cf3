#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace spark {

/// @brief Bytes of a checkpoint before and after a plan (format-spec §2.1: per quantized Linear an I32
/// weight_packed, weight_scale in the weight dtype, an I64[2] weight_shape; every other tensor untouched).
struct SizeEstimate
{
    std::uint64_t bytesBefore = 0; ///< every tensor's data bytes as they are
    std::uint64_t bytesAfter = 0;  ///< after the plan
    /// Bytes a draft step streams from memory: every tensor except gathers (embeddings, Markov rows, id
    /// maps), which read a few rows per token.
    std::uint64_t streamedBefore = 0;
    std::uint64_t streamedAfter = 0;
    std::uint64_t quantizedWeightsBefore = 0; ///< the weights the plan quantizes, as they are
    std::uint64_t quantizedWeightsAfter = 0;  ///< the same weights packed (+ scales + shapes)
    int quantizedModules = 0;

    /// Linear weights per scheme (BF16 for the Linears kept): their bytes before and after, and how many.
    struct SchemeBytes
    {
        std::uint64_t bytesBefore = 0;
        std::uint64_t bytesAfter = 0;
        int modules = 0;
    };
    std::map<std::string, SchemeBytes> byScheme;

    /// @brief Resident memory handed back to the KV cache (weights stay resident in full).
    std::uint64_t residentSaved() const { return bytesBefore - bytesAfter; }
};

} // namespace spark
