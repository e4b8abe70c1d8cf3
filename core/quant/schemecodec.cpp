#include "core/quant/schemecodec.h"

#include "core/quant/rtnkernels.h"
#include "core/quant/schemecodecs.h"
#include "core/quant/sweepkernels.h"
#include "core/util/parallel.h"

#include <numeric>

namespace spark {

std::uint64_t EncodedTensor::byteSize() const
{
    const auto elements =
        std::accumulate(shape.begin(), shape.end(), std::uint64_t{1}, std::multiplies<std::uint64_t>());
    return elements * static_cast<std::uint64_t>(dtypeBits(dtype) / 8);
}

std::uint64_t EncodedTensor::entryBytes() const
{
    return shape.empty() || shape[0] == 0 ? byteSize() : byteSize() / shape[0];
}

std::pair<std::uint64_t, std::uint64_t> EncodedTensor::rowRange(std::uint64_t firstRow,
                                                                std::uint64_t rowCount) const
{
    if (rowsPerEntry == 0) {
        return {0, byteSize()};
    }
    const auto first = firstRow / rowsPerEntry;
    const auto end = (firstRow + rowCount + rowsPerEntry - 1) / rowsPerEntry;
    return {first * entryBytes(), (end - first) * entryBytes()};
}

std::vector<std::byte> SchemeCodec::constantBytes(const EncodedTensor& /*tensor*/, std::uint64_t out,
                                                  std::uint64_t in, const SchemeContext& /*context*/) const
{
    const std::int64_t shape[2] = {static_cast<std::int64_t>(out), static_cast<std::int64_t>(in)};
    const auto bytes = std::as_bytes(std::span(shape));
    return {bytes.begin(), bytes.end()};
}

std::vector<std::vector<std::byte>> encodeWeight(const SchemeCodec& codec, const WeightRows& rows,
                                                 const SchemeContext& context, const QuantBackend& backend,
                                                 unsigned threads)
{
    std::vector<std::vector<std::byte>> parts;
    codec.encode(rows, context, parts, backend, threads);
    const auto tensors = codec.tensors(rows.rowCount, rows.cols, rows.dtype);
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i].rowsPerEntry == 0) {
            parts[i] = codec.constantBytes(tensors[i], rows.rowCount, rows.cols, context);
        }
    }
    return parts;
}

float weightAbsmax(const WeightRows& rows)
{
    if (!isQuantizableFloat(rows.dtype)) {
        throw QuantError(QuantErrorKind::UnsupportedDType,
                         "cannot quantize dtype " + std::string(dtypeName(rows.dtype)) +
                             " (BF16, F16 or F32 needed)",
                         std::string(rows.tensor));
    }
    std::size_t bad = kernels::kNoIndex;
    const float absmax = kernels::absmaxRows(rows, &bad);
    if (bad != kernels::kNoIndex) {
        rows.throwNonFinite(bad);
    }
    return absmax;
}

namespace codec {

void validateRows(const WeightRows& rows, int group, std::size_t alignment)
{
    if (!isQuantizableFloat(rows.dtype)) {
        throw QuantError(QuantErrorKind::UnsupportedDType,
                         "cannot quantize dtype " + std::string(dtypeName(rows.dtype)) +
                             " (BF16, F16 or F32 needed)",
                         std::string(rows.tensor));
    }
    if (rows.cols == 0 || (group > 0 && rows.cols % static_cast<std::size_t>(group) != 0)) {
        throw QuantError(QuantErrorKind::BadShape,
                         "tensor column shape must be divisible by the group size " + std::to_string(group) +
                             " but got " + std::to_string(rows.cols),
                         std::string(rows.tensor));
    }
    if (rows.firstRow % alignment != 0) {
        throw QuantError(QuantErrorKind::BadShape,
                         "row block must start at a multiple of " + std::to_string(alignment),
                         std::string(rows.tensor));
    }
}

void loadRow(const WeightRows& rows, std::size_t r, float* out)
{
    const std::byte* data = rows.row(r);
    if (kernels::loadFiniteWeights(rows.dtype, data, rows.cols, out)) {
        return;
    }
    // Read again to name the first non-finite weight.
    const auto limit = rtn::nonFiniteRaw(rows.dtype);
    for (std::size_t k = 0; k < rows.cols; ++k) {
        if (rtn::rawAbs(rows.dtype, data, k) >= limit) {
            rows.throwNonFinite(r * rows.cols + k);
        }
        out[k] = rtn::loadWeight(rows.dtype, data, k);
    }
}

void forEachRow(const WeightRows& rows, unsigned threads,
                const std::function<void(std::size_t r, const float* w)>& body)
{
    parallelFor(rows.rowCount,
                std::max<std::size_t>(1, (std::size_t{1} << 14) / std::max<std::size_t>(rows.cols, 1)),
                resolveThreads(static_cast<int>(threads)), [&](std::size_t begin, std::size_t end) {
                    std::vector<float> w(rows.cols);
                    for (std::size_t r = begin; r < end; ++r) {
                        loadRow(rows, r, w.data());
                        body(r, w.data());
                    }
                });
}

void sizeParts(const std::vector<EncodedTensor>& tensors, const WeightRows& rows,
               std::vector<std::vector<std::byte>>& parts)
{
    parts.resize(tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        parts[i].resize(
            tensors[i].rowsPerEntry == 0
                ? 0
                : static_cast<std::size_t>(tensors[i].rowRange(rows.firstRow, rows.rowCount).second));
    }
}

} // namespace codec
} // namespace spark
