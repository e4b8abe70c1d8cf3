#pragma once

#include "core/io/checkpoint.h"
#include "core/quant/weightrows.h"

#include <optional>
#include <vector>

namespace spark {

/// @brief Reads a 2-D weight in blocks of whole rows into one reused buffer (pread, not the mapping, so
/// resident memory does not grow with the tensor) and hands each block out as WeightRows.
class RowChunkReader
{
  public:
    /// Blocks hold a multiple of @p rowAlignment rows (except the last), as SchemeCodec::rowAlignment() asks.
    RowChunkReader(const Checkpoint& checkpoint, const CheckpointTensor& tensor,
                   std::uint64_t chunkBytes = kChunkBytes, std::size_t rowAlignment = 1);

    std::size_t cols() const { return m_cols; }
    std::size_t maxRows() const { return m_maxRows; }
    std::size_t elementBytes() const { return m_elementBytes; }
    /// @brief The next block of rows, or nullopt at the end. The block stays valid until the next call.
    std::optional<WeightRows> next();

    /// @brief max |w| of the whole tensor, streamed (NVFP4's global scale); leaves the reader at the end.
    float absmax();

  private:
    const SafetensorsFile& m_file;
    const TensorInfo& m_info;
    std::size_t m_cols = 0;
    std::size_t m_rowCount = 0;
    std::size_t m_elementBytes = 2;
    std::size_t m_maxRows = 1;
    std::size_t m_nextRow = 0;
    std::vector<std::byte> m_buffer;
};

} // namespace spark
