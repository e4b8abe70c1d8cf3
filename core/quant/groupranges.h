#pragma once

#include <cstddef>
#include <vector>

namespace spark {

/// @brief The range each group of a weight is quantized under, chosen by a searching rounding method:
/// the codecs derive the group's CT parameters from it exactly as compressed-tensors' calculate_qparams
/// derives them from an observer's (min, max), and encode RTN codes under them. Row-major per
/// [row][group]; every min <= 0 <= every max (calculate_qparams' clamp applied).
struct GroupRanges
{
    std::size_t groupsPerRow = 0;
    std::vector<float> mins;
    std::vector<float> maxs;
    /// max over groups of max(-min, max): NVFP4's global scale comes from these shrunk statistics (LC
    /// Observer.get_global_scale), over every member of a fused set.
    float absmax = 0.0f;

    float min(std::size_t globalRow, std::size_t group) const
    {
        return mins[globalRow * groupsPerRow + group];
    }
    float max(std::size_t globalRow, std::size_t group) const
    {
        return maxs[globalRow * groupsPerRow + group];
    }
};

} // namespace spark
