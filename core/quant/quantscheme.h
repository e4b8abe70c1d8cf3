#pragma once

#include "core/io/dtype.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace spark {

/// @brief Which weight dimension tensor parallelism splits (vLLM's Linear classes, format-spec §4.5).
enum class TensorSplit {
    None,   ///< ReplicatedLinear (fc)
    Output, ///< ColumnParallelLinear, MergedColumnParallelLinear, QKVParallelLinear
    Input,  ///< RowParallelLinear (o_proj, down_proj)
};

/// @brief A symmetric integer weight-only quantization scheme (compressed-tensors `pack-quantized`,
/// format-spec §2): @p bits per weight, one scale per @p groupSize consecutive input columns of a row.
struct QuantScheme
{
    int bits = 4;        ///< 4 or 8
    int groupSize = 128; ///< 32, 64, 128, or -1 for one scale per output row ("channel" strategy)

    /// @brief True for a supported combination (bits 4|8, group 32|64|128|-1).
    bool isValid() const;
    /// @brief Throws QuantError (InvalidScheme) unless isValid().
    void validate() const;

    bool perChannel() const { return groupSize < 0; }
    /// Smallest quantized value: -8 (4-bit), -128 (8-bit).
    int qMin() const { return -(1 << (bits - 1)); }
    /// Largest quantized value: 7 (4-bit), 127 (8-bit).
    int qMax() const { return (1 << (bits - 1)) - 1; }
    /// Offset added before packing (u = q + offset, format-spec §2.2).
    int packOffset() const { return 1 << (bits - 1); }
    /// Quantized values per packed int32 word: 8 (4-bit), 4 (8-bit).
    int valuesPerWord() const { return 32 / bits; }
    /// The CT divisor (q_max - q_min) / 2: 7.5 (4-bit), 127.5 (8-bit). Not 7: format-spec §2.3.
    float scaleDivisor() const { return bits == 4 ? 7.5f : 127.5f; }

    /// @brief Columns covered by one scale in a row of @p cols columns.
    std::size_t groupWidth(std::size_t cols) const
    {
        return perChannel() ? cols : static_cast<std::size_t>(groupSize);
    }
    /// @brief Scales per row: ceil(cols / group) (1 when per channel).
    std::size_t groupsPerRow(std::size_t cols) const;
    /// @brief int32 words per packed row: ceil(cols * bits / 32).
    std::size_t packedWordsPerRow(std::size_t cols) const
    {
        return (cols * static_cast<std::size_t>(bits) + 31) / 32;
    }
    /// @brief True when compressed-tensors can quantize a row of @p cols columns with this scheme
    /// (group strategy needs cols % group == 0, format-spec §2.4).
    bool dividesColumns(std::size_t cols) const;
    /// @brief The export shape gate (format-spec §7.2, §8.13): columns divisible by the group and
    /// out % 64 == 0, which vLLM's Marlin/Machete kernels need.
    bool acceptsShape(std::uint64_t out, std::uint64_t in) const;

    /// "w4 g128", "w8 channel"
    std::string label() const;

    // vLLM serving limits of the scheme (implemented in core/plan/schemelimits.cpp).

    /// @brief Empty when vLLM can run the scheme; otherwise why not ("group size 256: Marlin supports ...").
    std::string problem() const;
    /// @brief "W4A16 g128", "W8A16 channel".
    std::string name() const;
    /// @brief Empty when a [@p out, @p in] weight can be quantized and served on every CUDA kernel vLLM may
    /// pick (the portable rule of format-spec §4.6: in % 128 == 0, out % 64 == 0, in % group == 0, on the
    /// part each of
    /// @p tpDegree ranks holds); otherwise a one-line reason naming the failing dimension.
    std::string shapeProblem(std::uint64_t out, std::uint64_t in, TensorSplit split, int tpDegree) const;
    /// @brief Bytes of weight_packed (I32 [out, ceil(in*bits/32)]) + weight_scale ([out, groups] in the
    /// weight dtype, as CT's initialize_qparams does) + weight_shape (I64 [2]) for a [@p out, @p in] weight.
    std::uint64_t quantizedBytes(std::uint64_t out, std::uint64_t in, DType weightDtype) const;
};

} // namespace spark
