#pragma once

// Splits a block of rows over threads for the single-threaded SIMD kernels (internal to core/quant).

#include "core/quant/rtnkernels.h"
#include "core/quant/weightrows.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>

namespace spark::rowblocks {

/// @brief Rows [begin, end) of @p rows as a block of their own.
inline WeightRows subBlock(const WeightRows& rows, std::size_t begin, std::size_t end)
{
    WeightRows part = rows;
    part.data = rows.row(begin);
    part.rowCount = end - begin;
    part.firstRow = rows.firstRow + begin;
    return part;
}

/// @brief Runs @p kernel(part, firstRowOfPart) over row ranges in parallel; each returns the flat index
/// of its first NaN/Inf (or kernels::kNoIndex) and stops there, so the smallest over ranges is the global
/// first, which is thrown as the NonFinite QuantError. Ranges hold about 64 Ki elements (large enough to
/// amortise scheduling, small enough to balance) and start at a multiple of @p alignment rows.
template <typename Kernel>
void run(const WeightRows& rows, std::size_t alignment, unsigned threads, const Kernel& kernel)
{
    std::size_t grain =
        std::max<std::size_t>(1, (std::size_t{1} << 16) / std::max<std::size_t>(rows.cols, 1));
    grain = (grain + alignment - 1) / alignment * alignment;
    std::atomic<std::size_t> firstBad{kernels::kNoIndex};
    parallelFor(rows.rowCount, grain, resolveThreads(static_cast<int>(threads)),
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

} // namespace spark::rowblocks
