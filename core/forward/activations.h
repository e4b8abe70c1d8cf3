#pragma once

#include <cstdint>
#include <vector>

namespace spark {

/// @brief A row-major FP32 matrix of activations: one row per token (or query row), one column per feature.
struct Activations
{
    std::int64_t rows = 0;
    std::int64_t cols = 0;
    std::vector<float> values;

    Activations() = default;
    Activations(std::int64_t r, std::int64_t c) : rows(r), cols(c), values(static_cast<std::size_t>(r * c)) {}

    float* row(std::int64_t r) { return values.data() + r * cols; }
    const float* row(std::int64_t r) const { return values.data() + r * cols; }
    /// @brief Rows @p indices of this matrix, in that order.
    Activations gather(const std::vector<std::int64_t>& indices) const;
    /// @brief Columns [first, first + count) of every row.
    Activations columns(std::int64_t first, std::int64_t count) const;
};

} // namespace spark
