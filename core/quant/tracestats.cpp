#include "core/quant/tracestats.h"

#include "core/quant/rtnscalar.h"
#include "core/util/parallel.h"

#include <bit>
#include <cmath>
#include <mutex>

namespace spark::kernels {
namespace {

int bin(double t, int bins)
{
    return static_cast<int>(std::clamp(std::floor(t), 0.0, static_cast<double>(bins - 1)));
}

} // namespace

void traceErrorStats(const SchemeCodec& codec, const WeightRows& rows, const SchemeContext& context,
                     unsigned histogramStride, RowErrorPartials* perRow, StatsHistograms& histograms,
                     unsigned threads)
{
    const double range = codec.gridRange();
    const double weightScale = kWeightBins / (2.0 * range);
    const double errorScale = kErrorBins / (-2.0 * static_cast<double>(kErrorLo));
    std::mutex merge;
    parallelFor(rows.rowCount, 8, threads, [&](std::size_t begin, std::size_t end) {
        StatsHistograms local;
        std::vector<ElementCode> codes(rows.cols);
        for (std::size_t r = begin; r < end; ++r) {
            RowErrorPartials p;
            p.epsScales = static_cast<std::uint32_t>(codec.traceRow(rows, r, context, codes.data()));
            const std::byte* data = rows.row(r);
            for (std::size_t k = 0; k < rows.cols; ++k) {
                const double w = rtn::loadWeight(rows.dtype, data, k);
                const auto& c = codes[k];
                const double d = rtn::roundToDType(rows.dtype, c.value * c.scale);
                const double exact = w - static_cast<double>(c.value) * static_cast<double>(c.scale);
                p.sumW2 += w * w;
                p.sumAbsW += std::fabs(w);
                p.sumErr2Exact += exact * exact;
                const bool counted = histogramSampled(rows.firstRow + r, k, histogramStride);
                if (counted) {
                    ++local.q[c.code];
                    ++local.weight[static_cast<std::size_t>(
                        bin((w / c.scale + range) * weightScale, kWeightBins))];
                }
                if (!std::isfinite(d)) {
                    ++p.dequantNonFinite;
                    if (counted) {
                        ++local.error[kErrorBins];
                        ++local.absErr[kAbsErrBins];
                    }
                    continue;
                }
                const double err = w - d;
                p.sumErr2 += err * err;
                p.sumAbsErr += std::fabs(err);
                p.maxAbsErr = std::max(p.maxAbsErr, static_cast<float>(std::fabs(err)));
                if (!counted) {
                    continue;
                }
                ++local.error[static_cast<std::size_t>(
                    bin((err / c.scale - kErrorLo) * errorScale, kErrorBins))];
                const auto absBits = std::bit_cast<std::uint32_t>(static_cast<float>(std::fabs(err)));
                ++local.absErr[absBits >> kAbsErrShift];
            }
            perRow[r] = p;
        }
        const std::lock_guard lock(merge);
        for (const auto& pair :
             {std::pair{&histograms.q, &local.q}, std::pair{&histograms.weight, &local.weight},
              std::pair{&histograms.error, &local.error}, std::pair{&histograms.absErr, &local.absErr}}) {
            for (std::size_t i = 0; i < pair.first->size(); ++i) {
                (*pair.first)[i] += (*pair.second)[i];
            }
        }
    });
}

} // namespace spark::kernels
