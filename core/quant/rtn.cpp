#include "core/quant/rtn.h"

#include "core/quant/quantbackend.h"
#include "core/quant/rtnkernels.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>

namespace spark {

namespace {

// About 64 Ki elements per task: large enough to amortise scheduling, small enough to balance.
std::size_t rowGrain(std::size_t cols)
{
    return std::max<std::size_t>(1, (std::size_t{1} << 16) / std::max<std::size_t>(cols, 1));
}

WeightRows subBlock(const WeightRows& rows, std::size_t begin, std::size_t end)
{
    WeightRows part = rows;
    part.data = rows.row(begin);
    part.rowCount = end - begin;
    part.firstRow = rows.firstRow + begin;
    return part;
}

// Runs @p kernel over row ranges in parallel and throws for the smallest non-finite index found.
// Each range stops at its own first bad element, so the minimum over ranges is the global first.
template <typename Kernel> void runRows(const WeightRows& rows, unsigned threads, Kernel kernel)
{
    std::atomic<std::size_t> firstBad{kernels::kNoIndex};
    parallelFor(rows.rowCount, rowGrain(rows.cols), resolveThreads(static_cast<int>(threads)),
                [&](std::size_t begin, std::size_t end) {
                    const std::size_t bad = kernel(subBlock(rows, begin, end), begin);
                    if (bad != kernels::kNoIndex) {
                        const std::size_t flat = begin * rows.cols + bad;
                        std::size_t seen = firstBad.load();
                        while (flat < seen && !firstBad.compare_exchange_weak(seen, flat)) {
                        }
                    }
                });
    if (firstBad.load() != kernels::kNoIndex) {
        rows.throwNonFinite(firstBad.load());
    }
}

} // namespace

void computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut, unsigned threads)
{
    rows.validate(scheme);
    const std::size_t rowScaleBytes = scheme.groupsPerRow(rows.cols) * scaleBytes(rows.dtype);
    runRows(rows, threads, [&](const WeightRows& part, std::size_t begin) {
        return kernels::computeScales(part, scheme, scalesOut + begin * rowScaleBytes);
    });
}

void quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                  std::int32_t* packedOut, unsigned threads)
{
    rows.validate(scheme);
    const std::size_t rowScaleBytes = scheme.groupsPerRow(rows.cols) * scaleBytes(rows.dtype);
    const std::size_t words = scheme.packedWordsPerRow(rows.cols);
    runRows(rows, threads, [&](const WeightRows& part, std::size_t begin) {
        return kernels::quantizeRows(part, scheme, scales + begin * rowScaleBytes, packedOut + begin * words);
    });
}

QuantizedWeight quantize(const WeightRows& rows, const QuantScheme& scheme, unsigned threads)
{
    return cpuBackend().quantize(rows, scheme, threads);
}

} // namespace spark
