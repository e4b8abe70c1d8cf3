#include "core/quant/rtnreference.h"

#include "core/quant/packing.h"
#include "core/quant/rtnscalar.h"

#include <algorithm>
#include <vector>

namespace spark::reference {

namespace {

void checkFinite(const WeightRows& rows)
{
    const auto limit = rtn::nonFiniteRaw(rows.dtype);
    const std::size_t n = rows.rowCount * rows.cols;
    for (std::size_t i = 0; i < n; ++i) {
        if (rtn::rawAbs(rows.dtype, rows.data, i) >= limit) {
            rows.throwNonFinite(i);
        }
    }
}

} // namespace

void computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut)
{
    rows.validate(scheme);
    checkFinite(rows);
    const std::size_t groups = scheme.groupsPerRow(rows.cols);
    const std::size_t width = scheme.groupWidth(rows.cols);
    const std::size_t sBytes = scaleBytes(rows.dtype);
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        for (std::size_t g = 0; g < groups; ++g) {
            float absmax = 0.0f;
            for (std::size_t k = g * width; k < std::min(rows.cols, (g + 1) * width); ++k) {
                absmax =
                    std::max(absmax, std::fabs(rtn::loadWeight(rows.dtype, rows.data, r * rows.cols + k)));
            }
            const float s = rtn::scaleFromAbsmax(rows.dtype, absmax, scheme.scaleDivisor());
            rtn::storeScale(rows.dtype, s, scalesOut + (r * groups + g) * sBytes);
        }
    }
}

void quantizeValues(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                    std::int8_t* qOut)
{
    rows.validate(scheme);
    checkFinite(rows);
    const std::size_t groups = scheme.groupsPerRow(rows.cols);
    const std::size_t width = scheme.groupWidth(rows.cols);
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        for (std::size_t k = 0; k < rows.cols; ++k) {
            const float s = rtn::loadScale(rows.dtype, scales, r * groups + k / width);
            const float w = rtn::loadWeight(rows.dtype, rows.data, r * rows.cols + k);
            qOut[r * rows.cols + k] =
                static_cast<std::int8_t>(rtn::quantizeValue(rows.dtype, w, s, scheme.qMin(), scheme.qMax()));
        }
    }
}

void quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                  std::int32_t* packedOut)
{
    std::vector<std::int8_t> q(rows.rowCount * rows.cols);
    quantizeValues(rows, scheme, scales, q.data());
    const std::size_t words = scheme.packedWordsPerRow(rows.cols);
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        packRow(q.data() + r * rows.cols, rows.cols, scheme.bits, packedOut + r * words);
    }
}

} // namespace spark::reference
