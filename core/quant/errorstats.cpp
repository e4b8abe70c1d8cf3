#include "core/quant/errorstats.h"

#include "core/quant/quanterror.h"
#include "core/quant/statskernels.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <mutex>

namespace spark {

ErrorStatsAccumulator::ErrorStatsAccumulator(const QuantScheme& scheme, std::uint64_t rows,
                                             std::uint64_t cols)
    : m_scheme(scheme), m_rows(rows), m_cols(cols),
      m_qHist(static_cast<std::size_t>(scheme.qMax() - scheme.qMin() + 1)),
      m_weightHist(kernels::kWeightBins), m_errorHist(kernels::kErrorBins + 1),
      m_absErrHist(kernels::kAbsErrBins + 1)
{
    scheme.validate();
}

void ErrorStatsAccumulator::addRows(const WeightRows& rows, unsigned threads)
{
    rows.validate(m_scheme);
    if (rows.cols != m_cols || rows.firstRow != m_rowsDone || m_rowsDone + rows.rowCount > m_rows) {
        throw QuantError(QuantErrorKind::BadShape, "row block does not continue the tensor",
                         std::string(rows.tensor));
    }
    std::vector<kernels::RowErrorPartials> perRow(rows.rowCount);
    std::atomic<std::size_t> firstBad{kernels::kNoIndex};
    std::mutex mergeMutex;
    // About 64 Ki elements per chunk, handed out dynamically; each worker keeps one set of counters
    // for all its chunks and merges it once (integer counts commute, so merge order does not matter).
    const std::size_t grain =
        std::max<std::size_t>(1, (std::size_t{1} << 16) / std::max<std::size_t>(rows.cols, 1));
    const std::size_t chunks = (rows.rowCount + grain - 1) / grain;
    const auto workers =
        static_cast<unsigned>(std::min<std::size_t>(resolveThreads(static_cast<int>(threads)), chunks));
    std::atomic<std::size_t> nextChunk{0};
    const auto merge = [&](const kernels::StatsCounters& counters) {
        std::lock_guard lock(mergeMutex);
        counters.addTo(m_qHist.data(), m_weightHist.data(), m_errorHist.data(), m_absErrHist.data());
    };
    parallelFor(workers, 1, workers, [&](std::size_t, std::size_t) {
        kernels::StatsCounters counters(m_scheme.bits);
        for (;;) {
            const std::size_t chunk = nextChunk.fetch_add(1);
            if (chunk >= chunks) {
                break;
            }
            const std::size_t begin = chunk * grain;
            const std::size_t end = std::min(rows.rowCount, begin + grain);
            WeightRows part = rows;
            part.data = rows.row(begin);
            part.rowCount = end - begin;
            const std::size_t bad = kernels::errorStatsCount(part, m_scheme, perRow.data() + begin, counters);
            if (bad != kernels::kNoIndex) {
                const std::size_t flat = begin * rows.cols + bad;
                std::size_t seen = firstBad.load();
                while (flat < seen && !firstBad.compare_exchange_weak(seen, flat)) {
                }
                return; // the block throws; its counts are not needed
            }
            // 32-bit counters: merge long before any bin could wrap.
            if (counters.elements >= (std::uint64_t{1} << 31)) {
                merge(counters);
                counters.clear();
            }
        }
        if (counters.elements > 0) {
            merge(counters);
        }
    });
    if (firstBad.load() != kernels::kNoIndex) {
        rows.throwNonFinite(firstBad.load());
    }
    // Row order, one row at a time: the float64 totals are the same for any split.
    for (const auto& p : perRow) {
        m_sumW2 += p.sumW2;
        m_sumAbsW += p.sumAbsW;
        m_sumErr2 += p.sumErr2;
        m_sumAbsErr += p.sumAbsErr;
        m_sumErr2Exact += p.sumErr2Exact;
        m_maxAbsErr = std::max(m_maxAbsErr, static_cast<double>(p.maxAbsErr));
        m_nonFinite += p.dequantNonFinite;
        m_epsScales += p.epsScales;
    }
    m_rowsDone += rows.rowCount;
}

TensorErrorStats ErrorStatsAccumulator::result() const
{
    TensorErrorStats s;
    s.rows = m_rows;
    s.cols = m_cols;
    s.groups = m_rows * m_scheme.groupsPerRow(static_cast<std::size_t>(m_cols));
    s.epsScaleGroups = m_epsScales;
    s.dequantNonFinite = m_nonFinite;
    const double n = static_cast<double>(m_rows * m_cols);
    s.meanAbsW = n > 0 ? m_sumAbsW / n : 0.0;
    const double normW = std::sqrt(m_sumW2);
    if (normW > 0) {
        s.relErrExactQs = std::sqrt(m_sumErr2Exact) / normW;
    }
    if (m_nonFinite == 0 && n > 0) {
        if (normW > 0) {
            s.relErr = std::sqrt(m_sumErr2) / normW;
        }
        s.maxAbsErr = m_maxAbsErr;
        s.meanAbsErr = m_sumAbsErr / n;
        if (s.meanAbsW > 0) {
            s.errOverMeanAbsW = *s.meanAbsErr / s.meanAbsW;
        }
        if (m_sumErr2 > 0 && m_sumW2 > 0) {
            s.snrDb = 10.0 * std::log10(m_sumW2 / m_sumErr2);
        }
        // p95 by rank: the first log bin whose cumulative count reaches ceil(0.95 n).
        const auto rank = static_cast<std::uint64_t>(std::ceil(0.95 * n));
        std::uint64_t cumulative = 0;
        for (std::size_t b = 0; b < static_cast<std::size_t>(kernels::kAbsErrBins); ++b) {
            cumulative += m_absErrHist[b];
            if (cumulative >= rank) {
                const auto upperBits = static_cast<std::uint32_t>((b + 1) << kernels::kAbsErrShift);
                s.p95AbsErr = std::min(m_maxAbsErr, static_cast<double>(std::bit_cast<float>(upperBits)));
                break;
            }
        }
    }
    s.qHist = m_qHist;
    const double range = m_scheme.packOffset();
    s.weightHist = FixedHistogram{-range, range, m_weightHist};
    // The last error bin counts the elements with a non-finite D, which the histogram leaves out.
    s.errorHist = FixedHistogram{kernels::kErrorLo, -static_cast<double>(kernels::kErrorLo),
                                 std::vector<std::uint64_t>(m_errorHist.begin(), m_errorHist.end() - 1)};
    return s;
}

TensorErrorStats computeErrorStats(const WeightRows& rows, const QuantScheme& scheme, unsigned threads)
{
    // The accumulator expects blocks from row 0; a block that starts later is measured alone and its
    // errors are renamed with the block's own first row.
    WeightRows whole = rows;
    whole.firstRow = 0;
    ErrorStatsAccumulator single(scheme, rows.rowCount, rows.cols);
    try {
        single.addRows(whole, threads);
    } catch (const QuantError& e) {
        if (e.kind() == QuantErrorKind::NonFinite && e.index()) {
            rows.throwNonFinite(static_cast<std::size_t>(*e.index()));
        }
        throw;
    }
    return single.result();
}

} // namespace spark
