#pragma once

#include "core/audit/quantargs.h"
#include "core/audit/storedlayout.h"
#include "core/io/checkpoint.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spark {

/// @brief Dequantizes a quantized module of a checkpoint lazily, block of rows by block of rows, exactly as
/// compressed-tensors decompresses it (schemes-spec §8): D = rnd_dt(q·s), rnd_dt(rnd_dt(q − zp)·s),
/// rnd_dt(fp8·s), NVFP4 through its codec. Reads with pread, so memory is bounded by the block.
/// Any bit width 1..8 of pack-quantized (dense CT 0.18 and older per-word packing), asymmetric zero points,
/// actorder g_idx, and unpacked I8 / F8_E4M3 weights (naive-, int-, float-quantized).
class ModuleDecoder
{
  public:
    /// @p layout must be decodable(); throws std::invalid_argument otherwise (naming the module).
    ModuleDecoder(const Checkpoint& checkpoint, std::string prefix, const QuantArgs& args,
                  const StoredLayout& layout);

    std::uint64_t rows() const { return m_layout.out; }
    std::uint64_t cols() const { return m_layout.in; }
    DType dtype() const { return m_layout.weightDtype; }
    const QuantArgs& args() const { return m_args; }
    /// @brief Blocks must start at a multiple of this row (zero points of several rows share a word).
    std::size_t rowAlignment() const;
    /// @brief Rows [firstRow, firstRow + rowCount) as floats of the weight dtype (±Inf where CT overflows).
    /// Throws IoError on a read failure.
    void decode(std::uint64_t firstRow, std::size_t rowCount, float* out) const;

  private:
    void decodeInt(std::uint64_t firstRow, std::size_t rowCount, float* out) const;
    void decodeFp8(std::uint64_t firstRow, std::size_t rowCount, float* out) const;
    void decodeNvfp4(std::uint64_t firstRow, std::size_t rowCount, float* out) const;
    std::vector<std::byte> readRows(const CheckpointTensor& tensor, std::uint64_t firstRow,
                                    std::size_t rowCount) const;
    float scaleAt(const std::vector<std::byte>& scales, std::size_t localRow, std::size_t col) const;
    int zeroPointAt(std::uint64_t row, std::size_t group) const;

    const Checkpoint& m_checkpoint;
    std::string m_prefix;
    QuantArgs m_args;
    StoredLayout m_layout;
    const CheckpointTensor* m_values = nullptr; ///< weight_packed or weight
    const CheckpointTensor* m_scale = nullptr;
    std::vector<std::byte> m_zeroPoints; ///< whole tensor (small: out·groups·bits/8 bytes)
    DType m_zeroPointDtype = DType::I32;
    std::vector<std::int32_t> m_gIdx; ///< actorder group: the group of each column
    std::size_t m_groups = 1;
};

} // namespace spark
