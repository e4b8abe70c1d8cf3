#include "core/quant/rtn.h"

#include "core/quant/quantbackend.h"
#include "core/quant/rowblocks.h"

namespace spark {

void computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut, unsigned threads)
{
    rows.validate(scheme);
    const std::size_t rowScaleBytes = scheme.groupsPerRow(rows.cols) * scaleBytes(rows.dtype);
    rowblocks::run(rows, 1, threads, [&](const WeightRows& part, std::size_t begin) {
        return kernels::computeScales(part, scheme, scalesOut + begin * rowScaleBytes);
    });
}

void quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                  std::int32_t* packedOut, unsigned threads)
{
    rows.validate(scheme);
    const std::size_t rowScaleBytes = scheme.groupsPerRow(rows.cols) * scaleBytes(rows.dtype);
    const std::size_t words = scheme.packedWordsPerRow(rows.cols);
    rowblocks::run(rows, 1, threads, [&](const WeightRows& part, std::size_t begin) {
        return kernels::quantizeRows(part, scheme, scales + begin * rowScaleBytes, packedOut + begin * words);
    });
}

QuantizedWeight quantize(const WeightRows& rows, const QuantScheme& scheme, unsigned threads)
{
    return cpuBackend().quantize(rows, scheme, threads);
}

} // namespace spark
