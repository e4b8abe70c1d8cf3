#include "core/quant/rowchunks.h"

#include "core/quant/schemecodec.h"

#include <algorithm>

namespace spark {

RowChunkReader::RowChunkReader(const Checkpoint& checkpoint, const CheckpointTensor& tensor,
                               std::uint64_t chunkBytes, std::size_t rowAlignment)
    : m_file(checkpoint.fileOf(tensor)), m_info(tensor.info)
{
    m_rowCount = static_cast<std::size_t>(m_info.shape.at(0));
    m_cols = static_cast<std::size_t>(m_info.shape.at(1));
    m_elementBytes = static_cast<std::size_t>(dtypeBits(m_info.dtype) / 8);
    const std::size_t rowBytes = std::max<std::size_t>(1, m_cols * m_elementBytes);
    m_maxRows = std::clamp<std::size_t>(chunkBytes / rowBytes, 1, std::max<std::size_t>(1, m_rowCount));
    const std::size_t align = std::max<std::size_t>(1, rowAlignment);
    m_maxRows = std::max(align, m_maxRows / align * align);
    m_buffer.resize(m_maxRows * rowBytes);
}

std::optional<WeightRows> RowChunkReader::next()
{
    if (m_nextRow >= m_rowCount) {
        return std::nullopt;
    }
    const std::size_t count = std::min(m_maxRows, m_rowCount - m_nextRow);
    const std::size_t rowBytes = m_cols * m_elementBytes;
    m_file.read(m_info, m_nextRow * rowBytes, std::span(m_buffer.data(), count * rowBytes));
    WeightRows rows;
    rows.dtype = m_info.dtype;
    rows.data = m_buffer.data();
    rows.rowCount = count;
    rows.cols = m_cols;
    rows.firstRow = m_nextRow;
    rows.tensor = m_info.name;
    m_nextRow += count;
    return rows;
}

float RowChunkReader::absmax()
{
    float best = 0;
    while (const auto rows = next()) {
        best = std::max(best, weightAbsmax(*rows));
    }
    return best;
}

} // namespace spark
