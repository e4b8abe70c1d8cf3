#include "core/quant/schemesweep.h"

#include "core/quant/quanterror.h"
#include "core/quant/rowblocks.h"
#include "core/quant/sweepkernels.h"

#include <algorithm>

namespace spark {

SchemeSweepAccumulator::SchemeSweepAccumulator(std::vector<const WeightScheme*> schemes,
                                               std::vector<SchemeContext> contexts, std::uint64_t rows,
                                               std::uint64_t cols)
    : m_schemes(std::move(schemes)), m_contexts(std::move(contexts)), m_rows(rows), m_cols(cols),
      m_sqErr(m_schemes.size()), m_nonFinite(m_schemes.size())
{
    if (m_contexts.empty()) {
        m_contexts.resize(m_schemes.size());
    }
    if (m_contexts.size() != m_schemes.size()) {
        throw QuantError(QuantErrorKind::InvalidScheme, "one scheme context per scheme is needed");
    }
    for (const auto* s : m_schemes) {
        if (!s || !s->quantizes()) {
            throw QuantError(QuantErrorKind::InvalidScheme,
                             "BF16 keeps the weight: there is no error to measure");
        }
        if (s->groupSize > 0 && (cols == 0 || cols % static_cast<std::uint64_t>(s->groupSize) != 0)) {
            throw QuantError(QuantErrorKind::BadShape,
                             std::string(s->name) +
                                 ": tensor column shape must be divisible by the group size " +
                                 std::to_string(s->groupSize) + " but got " + std::to_string(cols));
        }
    }
}

void SchemeSweepAccumulator::addRows(const WeightRows& rows, unsigned threads)
{
    if (!isQuantizableFloat(rows.dtype)) {
        throw QuantError(QuantErrorKind::UnsupportedDType,
                         "cannot quantize dtype " + std::string(dtypeName(rows.dtype)) +
                             " (BF16, F16 or F32 needed)",
                         std::string(rows.tensor));
    }
    if (rows.cols != m_cols || rows.firstRow != m_rowsDone || m_rowsDone + rows.rowCount > m_rows) {
        throw QuantError(QuantErrorKind::BadShape, "row block does not continue the tensor",
                         std::string(rows.tensor));
    }
    std::vector<kernels::SweepScheme> kernelSchemes;
    for (std::size_t i = 0; i < m_schemes.size(); ++i) {
        const auto* s = m_schemes[i];
        kernelSchemes.push_back({s->family, s->bits, s->groupSize, m_contexts[i].globalScale});
    }
    const std::size_t count = kernelSchemes.size();
    std::vector<double> sumW2(rows.rowCount);
    std::vector<kernels::SweepRowError> errors(rows.rowCount * count);
    rowblocks::run(rows, 1, threads, [&](const WeightRows& part, std::size_t begin) {
        return kernels::sweepRows(part, kernelSchemes.data(), count, sumW2.data() + begin,
                                  errors.data() + begin * count);
    });
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        m_sqNorm += sumW2[r];
        for (std::size_t i = 0; i < count; ++i) {
            m_sqErr[i] += errors[r * count + i].sumErr2;
            m_nonFinite[i] += errors[r * count + i].nonFinite;
        }
    }
    m_rowsDone += rows.rowCount;
}

std::vector<SweepError> SchemeSweepAccumulator::result() const
{
    std::vector<SweepError> out;
    for (std::size_t i = 0; i < m_schemes.size(); ++i) {
        SweepError e;
        e.scheme = m_schemes[i];
        e.dequantNonFinite = m_nonFinite[i];
        if (m_nonFinite[i] == 0) {
            e.sqErr = m_sqErr[i];
        }
        out.push_back(e);
    }
    return out;
}

} // namespace spark
