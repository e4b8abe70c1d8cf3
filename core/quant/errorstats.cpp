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

namespace {

template <typename T>
void addCounts(std::vector<std::uint64_t>& total, const std::vector<T>& part, std::size_t bins)
{
    for (std::size_t i = 0; i < bins; ++i) {
        total[i] += part[i];
    }
}

} // namespace

ErrorStatsAccumulator::ErrorStatsAccumulator(const QuantScheme& scheme, std::uint64_t rows,
                                             std::uint64_t cols)
    : m_scheme(scheme), m_rows(rows), m_cols(cols),
      m_qHist(static_cast<std::size_t>(scheme.qMax() - scheme.qMin() + 1)),
      m_weightHist(kernels::kWeightBins), m_errorHist(kernels::kErrorBins), m_absErrHist(kernels::kAbsErrBins)
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
    const std::size_t grain =
        std::max<std::size_t>(1, (std::size_t{1} << 16) / std::max<std::size_t>(rows.cols, 1));
    parallelFor(rows.rowCount, grain, resolveThreads(static_cast<int>(threads)),
                [&](std::size_t begin, std::size_t end) {
                    WeightRows part = rows;
                    part.data = rows.row(begin);
                    part.rowCount = end - begin;
                    kernels::StatsHistograms hist;
                    const std::size_t bad =
                        kernels::errorStatsRows(part, m_scheme, perRow.data() + begin, hist);
                    if (bad != kernels::kNoIndex) {
                        const std::size_t flat = begin * rows.cols + bad;
                        std::size_t seen = firstBad.load();
                        while (flat < seen && !firstBad.compare_exchange_weak(seen, flat)) {
                        }
                        return;
                    }
                    // Integer counts commute, so merge order does not matter.
                    std::lock_guard lock(mergeMutex);
                    addCounts(m_qHist, hist.q, m_qHist.size());
                    addCounts(m_weightHist, hist.weight, m_weightHist.size());
                    addCounts(m_errorHist, hist.error, m_errorHist.size());
                    addCounts(m_absErrHist, hist.absErr, m_absErrHist.size());
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
        for (std::size_t b = 0; b < m_absErrHist.size(); ++b) {
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
    s.errorHist = FixedHistogram{kernels::kErrorLo, -static_cast<double>(kernels::kErrorLo), m_errorHist};
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
