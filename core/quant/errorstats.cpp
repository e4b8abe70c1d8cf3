#include "core/quant/errorstats.h"

#include "core/quant/quantbackend.h"
#include "core/quant/quanterror.h"
#include "core/quant/schemecodecs.h"
#include "core/quant/statskernels.h"
#include "core/quant/tracestats.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace spark {

namespace {

/// Adds the first total.size() bins of a block's counts (the block's extra bins are always zero).
void addCounts(std::vector<std::uint64_t>& total, const std::vector<std::uint32_t>& block)
{
    for (std::size_t i = 0; i < total.size() && i < block.size(); ++i) {
        total[i] += block[i];
    }
}

} // namespace

namespace {

const WeightScheme& checkedIntScheme(const QuantScheme& scheme)
{
    scheme.validate();
    return *intSymmetricScheme(scheme.bits, scheme.groupSize);
}

const WeightScheme& checkedQuantizing(const WeightScheme& scheme)
{
    if (!scheme.quantizes()) {
        throw QuantError(QuantErrorKind::InvalidScheme,
                         "BF16 keeps the weight: there is no error to measure");
    }
    return scheme;
}

} // namespace

ErrorStatsAccumulator::ErrorStatsAccumulator(const QuantScheme& scheme, std::uint64_t rows,
                                             std::uint64_t cols)
    : ErrorStatsAccumulator(checkedIntScheme(scheme), rows, cols)
{
}

ErrorStatsAccumulator::ErrorStatsAccumulator(const WeightScheme& scheme, std::uint64_t rows,
                                             std::uint64_t cols, const SchemeContext& context)
    : m_scheme(&checkedQuantizing(scheme)), m_context(context), m_rows(rows), m_cols(cols),
      m_histogramStride(kernels::histogramStride(rows * cols)),
      m_qHist(static_cast<std::size_t>(scheme.codec()->codeCount())), m_weightHist(kernels::kWeightBins),
      m_errorHist(kernels::kErrorBins + 1), m_absErrHist(kernels::kAbsErrBins + 1)
{
}

void ErrorStatsAccumulator::addRows(const WeightRows& rows, unsigned threads, const QuantBackend* backend)
{
    // Searched ranges (a rounding method other than rtn) go through the codec's traceRow, which honours
    // them; the SIMD/CUDA kernels compute min-max scales only.
    const bool simd = m_scheme->family == SchemeFamily::IntSymmetric && !m_context.ranges;
    if (simd) {
        rows.validate(m_scheme->intScheme());
    } else {
        codec::validateRows(rows, m_scheme->groupSize);
    }
    if (rows.cols != m_cols || rows.firstRow != m_rowsDone || m_rowsDone + rows.rowCount > m_rows) {
        throw QuantError(QuantErrorKind::BadShape, "row block does not continue the tensor",
                         std::string(rows.tensor));
    }
    const QuantBackend& engine = backend ? *backend : cpuBackend();
    // The backends count in 32 bits: hand them at most 2^30 elements at a time.
    const std::size_t maxRows =
        std::max<std::size_t>(1, (std::size_t{1} << 30) / std::max<std::size_t>(rows.cols, 1));
    std::vector<kernels::RowErrorPartials> perRow;
    for (std::size_t begin = 0; begin < rows.rowCount; begin += maxRows) {
        WeightRows part = rows;
        part.data = rows.row(begin);
        part.rowCount = std::min(maxRows, rows.rowCount - begin);
        part.firstRow = rows.firstRow + begin;
        perRow.assign(part.rowCount, {});
        kernels::StatsHistograms counts;
        if (simd) {
            engine.errorStatsRows(part, m_scheme->intScheme(), m_histogramStride, perRow.data(), counts,
                                  threads);
        } else {
            kernels::traceErrorStats(*m_scheme->codec(), part, m_context, m_histogramStride, perRow.data(),
                                     counts, threads);
        }
        addCounts(m_qHist, counts.q);
        addCounts(m_weightHist, counts.weight);
        addCounts(m_errorHist, counts.error);
        addCounts(m_absErrHist, counts.absErr);
        for (const auto& row : perRow) {
            m_totals.add(row);
        }
        m_rowsDone += part.rowCount;
    }
}

TensorErrorStats ErrorStatsAccumulator::result() const
{
    TensorErrorStats s;
    s.rows = m_rows;
    s.cols = m_cols;
    s.groups = m_rows * m_scheme->codec()->groupsPerRow(static_cast<std::size_t>(m_cols));
    s.epsScaleGroups = m_totals.epsScales;
    s.dequantNonFinite = m_totals.dequantNonFinite;
    s.histogramStride = m_histogramStride;
    const double n = static_cast<double>(m_rows * m_cols);
    s.meanAbsW = n > 0 ? m_totals.sumAbsW / n : 0.0;
    s.sqNorm = m_totals.sumW2;
    if (m_totals.dequantNonFinite == 0) {
        s.sqErr = m_totals.sumErr2;
    }
    const double normW = std::sqrt(m_totals.sumW2);
    if (normW > 0) {
        s.relErrExactQs = std::sqrt(m_totals.sumErr2Exact) / normW;
    }
    if (m_totals.dequantNonFinite == 0 && n > 0) {
        if (normW > 0) {
            s.relErr = std::sqrt(m_totals.sumErr2) / normW;
        }
        s.maxAbsErr = m_totals.maxAbsErr;
        s.meanAbsErr = m_totals.sumAbsErr / n;
        if (s.meanAbsW > 0) {
            s.errOverMeanAbsW = *s.meanAbsErr / s.meanAbsW;
        }
        if (m_totals.sumErr2 > 0 && m_totals.sumW2 > 0) {
            s.snrDb = 10.0 * std::log10(m_totals.sumW2 / m_totals.sumErr2);
        }
        // p95 by rank among the sampled elements: the first log bin whose cumulative count reaches
        // ceil(0.95 counted).
        std::uint64_t counted = 0;
        for (const auto c : m_absErrHist) {
            counted += c;
        }
        const auto rank = static_cast<std::uint64_t>(std::ceil(0.95 * static_cast<double>(counted)));
        std::uint64_t cumulative = 0;
        for (std::size_t b = 0; b < static_cast<std::size_t>(kernels::kAbsErrBins); ++b) {
            cumulative += m_absErrHist[b];
            if (cumulative >= rank) {
                const auto upperBits = static_cast<std::uint32_t>((b + 1) << kernels::kAbsErrShift);
                s.p95AbsErr =
                    std::min(m_totals.maxAbsErr, static_cast<double>(std::bit_cast<float>(upperBits)));
                break;
            }
        }
    }
    s.qHist = m_qHist;
    const double range = m_scheme->codec()->gridRange();
    s.weightHist = FixedHistogram{-range, range, m_weightHist};
    // The last error bin counts the elements with a non-finite D, which the histogram leaves out.
    s.errorHist = FixedHistogram{kernels::kErrorLo, -static_cast<double>(kernels::kErrorLo),
                                 std::vector<std::uint64_t>(m_errorHist.begin(), m_errorHist.end() - 1)};
    return s;
}

TensorErrorStats computeErrorStats(const WeightRows& rows, const QuantScheme& scheme, unsigned threads,
                                   const QuantBackend* backend)
{
    return computeErrorStats(rows, checkedIntScheme(scheme), {}, threads, backend);
}

TensorErrorStats computeErrorStats(const WeightRows& rows, const WeightScheme& scheme,
                                   const SchemeContext& context, unsigned threads,
                                   const QuantBackend* backend)
{
    // The accumulator expects blocks from row 0; a block that starts later is measured alone and its
    // errors are renamed with the block's own first row.
    WeightRows whole = rows;
    whole.firstRow = 0;
    ErrorStatsAccumulator single(scheme, rows.rowCount, rows.cols, context);
    try {
        single.addRows(whole, threads, backend);
    } catch (const QuantError& e) {
        if (e.kind() == QuantErrorKind::NonFinite && e.index()) {
            rows.throwNonFinite(static_cast<std::size_t>(*e.index()));
        }
        throw;
    }
    return single.result();
}

} // namespace spark
