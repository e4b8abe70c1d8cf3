#include "core/audit/moduledecoder.h"

#include "core/io/floatconv.h"
#include "core/quant/rtnscalar.h"
#include "core/quant/schemecodec.h"

#include <cstring>
#include <stdexcept>

namespace spark {
namespace {

std::uint32_t wordAt(const std::byte* words, std::size_t i)
{
    std::uint32_t w;
    std::memcpy(&w, words + 4 * i, 4);
    return w;
}

/// Element @p k of a stream of @p bits-bit values: CT 0.18 packs densely across words, older versions put
/// floor(32/bits) values in each word (format-spec §2.2). @p stride steps between consecutive words.
std::uint32_t unpackAt(const std::byte* words, std::size_t wordCount, std::uint64_t k, int bits,
                       bool oldPacking, std::size_t stride = 1)
{
    const std::uint32_t mask = (1u << bits) - 1u;
    if (oldPacking) {
        const std::uint64_t perWord = 32 / static_cast<unsigned>(bits);
        return (wordAt(words, static_cast<std::size_t>(k / perWord) * stride) >>
                (static_cast<unsigned>(bits) * (k % perWord))) &
               mask;
    }
    const std::uint64_t bit = k * static_cast<std::uint64_t>(bits);
    const auto w = static_cast<std::size_t>(bit / 32);
    const auto shift = static_cast<unsigned>(bit % 32);
    std::uint32_t v = wordAt(words, w * stride) >> shift;
    if (shift + static_cast<unsigned>(bits) > 32 && w + 1 < wordCount) {
        v |= wordAt(words, (w + 1) * stride) << (32 - shift);
    }
    return v & mask;
}

} // namespace

ModuleDecoder::ModuleDecoder(const Checkpoint& checkpoint, std::string prefix, const QuantArgs& args,
                             const StoredLayout& layout)
    : m_checkpoint(checkpoint), m_prefix(std::move(prefix)), m_args(args), m_layout(layout)
{
    if (!layout.decodable()) {
        throw std::invalid_argument(m_prefix + ": the stored tensors do not fit " + args.describe() +
                                    (layout.issues.empty() ? "" : ": " + layout.issues.front().message));
    }
    const bool unpacked = args.format != "pack-quantized" && args.format != "nvfp4-pack-quantized";
    m_values = checkpoint.find(m_prefix + (unpacked ? ".weight" : ".weight_packed"));
    m_scale = checkpoint.find(m_prefix + ".weight_scale");
    if (args.strategy == "group" || args.strategy == "tensor_group") {
        m_groups = static_cast<std::size_t>(layout.in / static_cast<std::uint64_t>(args.groupSize));
    }
    if (!args.symmetric) {
        const auto* zp = checkpoint.find(m_prefix + ".weight_zero_point");
        m_zeroPointDtype = zp->info.dtype;
        m_zeroPoints.resize(static_cast<std::size_t>(zp->info.byteSize()));
        checkpoint.fileOf(*zp).read(zp->info, 0, std::span(m_zeroPoints.data(), m_zeroPoints.size()));
    }
    if (args.actorderGroup) {
        const auto* gidx = checkpoint.find(m_prefix + ".weight_g_idx");
        m_gIdx.resize(static_cast<std::size_t>(layout.in));
        checkpoint.fileOf(*gidx).read(
            gidx->info, 0, std::span(reinterpret_cast<std::byte*>(m_gIdx.data()), m_gIdx.size() * 4));
        for (auto& g : m_gIdx) {
            if (g < 0 || static_cast<std::size_t>(g) >= m_groups) {
                throw std::invalid_argument(m_prefix + ": weight_g_idx names group " + std::to_string(g) +
                                            " of " + std::to_string(m_groups));
            }
        }
    }
}

std::size_t ModuleDecoder::rowAlignment() const
{
    if (m_args.symmetric || m_args.format != "pack-quantized") {
        return 1;
    }
    // Rows whose zero points share one word, for every packing (32 rows cover whole words of any width).
    return m_layout.oldPacking ? 32 / static_cast<std::size_t>(m_args.bits) : 32;
}

std::vector<std::byte> ModuleDecoder::readRows(const CheckpointTensor& tensor, std::uint64_t firstRow,
                                               std::size_t rowCount) const
{
    const auto& shape = tensor.info.shape;
    // Tensor-wise ([1] or [1, 1]) and constant tensors: the whole (one-element) tensor.
    if (shape.size() < 2 || (shape[0] == 1 && m_layout.out > 1)) {
        std::vector<std::byte> all(static_cast<std::size_t>(tensor.info.byteSize()));
        m_checkpoint.fileOf(tensor).read(tensor.info, 0, std::span(all.data(), all.size()));
        return all;
    }
    const std::uint64_t rowBytes = tensor.info.byteSize() / shape[0];
    std::vector<std::byte> bytes(static_cast<std::size_t>(rowBytes * rowCount));
    m_checkpoint.fileOf(tensor).read(tensor.info, firstRow * rowBytes, std::span(bytes.data(), bytes.size()));
    return bytes;
}

float ModuleDecoder::scaleAt(const std::vector<std::byte>& scales, std::size_t localRow,
                             std::size_t col) const
{
    if (m_args.strategy == "tensor") {
        return rtn::loadScale(m_layout.weightDtype, scales.data(), 0);
    }
    std::size_t group = 0;
    if (m_groups > 1) {
        group = m_gIdx.empty() ? col / static_cast<std::size_t>(m_args.groupSize)
                               : static_cast<std::size_t>(m_gIdx[col]);
    }
    return rtn::loadScale(m_layout.weightDtype, scales.data(), localRow * m_groups + group);
}

int ModuleDecoder::zeroPointAt(std::uint64_t row, std::size_t group) const
{
    const std::size_t groups = m_args.strategy == "tensor" ? 1 : m_groups;
    if (m_args.strategy == "tensor") {
        row = 0;
    }
    if (m_args.format == "pack-quantized") {
        // Packed along the output dimension: column `group` of the [rows, groups] word matrix is the stream.
        const std::size_t wordRows = m_zeroPoints.size() / 4 / groups;
        const auto u = unpackAt(m_zeroPoints.data() + 4 * group, wordRows, row, m_args.bits,
                                m_layout.oldPacking, groups);
        return static_cast<int>(u) - (1 << (m_args.bits - 1));
    }
    const auto i = static_cast<std::size_t>(row) * groups + group;
    if (m_zeroPointDtype == DType::I8) {
        return static_cast<std::int8_t>(m_zeroPoints[i]);
    }
    std::int32_t v;
    std::memcpy(&v, m_zeroPoints.data() + 4 * i, 4);
    return v;
}

void ModuleDecoder::decode(std::uint64_t firstRow, std::size_t rowCount, float* out) const
{
    if (firstRow % rowAlignment() != 0 || firstRow + rowCount > m_layout.out) {
        throw std::out_of_range(m_prefix + ": rows " + std::to_string(firstRow) + "+" +
                                std::to_string(rowCount) + " are not an aligned block of its " +
                                std::to_string(m_layout.out) + " rows");
    }
    if (m_args.format == "nvfp4-pack-quantized") {
        decodeNvfp4(firstRow, rowCount, out);
    } else if (m_args.type == "float") {
        decodeFp8(firstRow, rowCount, out);
    } else {
        decodeInt(firstRow, rowCount, out);
    }
}

void ModuleDecoder::decodeInt(std::uint64_t firstRow, std::size_t rowCount, float* out) const
{
    const auto values = readRows(*m_values, firstRow, rowCount);
    const auto scales = readRows(*m_scale, firstRow, rowCount);
    const auto cols = static_cast<std::size_t>(m_layout.in);
    const DType dt = m_layout.weightDtype;
    const bool packed = m_args.format == "pack-quantized";
    const std::size_t words = packed ? static_cast<std::size_t>(m_values->info.shape[1]) : 0;
    const int offset = 1 << (m_args.bits - 1);
    for (std::size_t r = 0; r < rowCount; ++r) {
        for (std::size_t k = 0; k < cols; ++k) {
            const int q = packed ? static_cast<int>(unpackAt(values.data() + 4 * r * words, words, k,
                                                             m_args.bits, m_layout.oldPacking)) -
                                       offset
                                 : static_cast<std::int8_t>(values[r * cols + k]);
            const float s = scaleAt(scales, r, k);
            float v = static_cast<float>(q);
            if (!m_args.symmetric) {
                const std::size_t group =
                    m_groups > 1 ? (m_gIdx.empty() ? k / static_cast<std::size_t>(m_args.groupSize)
                                                   : static_cast<std::size_t>(m_gIdx[k]))
                                 : 0;
                v = rtn::roundToDType(dt, v - static_cast<float>(zeroPointAt(firstRow + r, group)));
            }
            out[r * cols + k] = rtn::roundToDType(dt, v * s);
        }
    }
}

void ModuleDecoder::decodeFp8(std::uint64_t firstRow, std::size_t rowCount, float* out) const
{
    const auto values = readRows(*m_values, firstRow, rowCount);
    const auto scales = readRows(*m_scale, firstRow, rowCount);
    const auto cols = static_cast<std::size_t>(m_layout.in);
    for (std::size_t r = 0; r < rowCount; ++r) {
        for (std::size_t k = 0; k < cols; ++k) {
            const float v = f8e4m3ToFloat(static_cast<std::uint8_t>(values[r * cols + k]));
            out[r * cols + k] = rtn::roundToDType(m_layout.weightDtype, v * scaleAt(scales, r, k));
        }
    }
}

void ModuleDecoder::decodeNvfp4(std::uint64_t firstRow, std::size_t rowCount, float* out) const
{
    const auto* global = m_checkpoint.find(m_prefix + ".weight_global_scale");
    const auto values = readRows(*m_values, firstRow, rowCount);
    const auto scales = readRows(*m_scale, firstRow, rowCount);
    const auto globalBytes = readRows(*global, 0, 1);
    const std::span<const std::byte> parts[] = {values, scales, globalBytes};
    findWeightScheme("NVFP4A16")
        ->codec()
        ->decode(parts, m_layout.weightDtype, rowCount, static_cast<std::size_t>(m_layout.in), out);
}

} // namespace spark
