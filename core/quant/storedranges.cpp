#include "core/quant/storedranges.h"

#include "core/quant/candidatequant.h"
#include "core/quant/quanterror.h"
#include "core/quant/roundingkernels.h"

#include <cmath>

namespace spark {

struct StoredRangeMatch::Impl
{
    const RoundingMethod& method;
    candidate::Arith arith;
    std::size_t cols = 0, width = 0, groups = 0;
    std::vector<float> scales;
    std::shared_ptr<GroupRanges> ranges = std::make_shared<GroupRanges>();
};

StoredRangeMatch::StoredRangeMatch(const RoundingMethod& method, const WeightScheme& scheme,
                                   std::uint64_t rows, std::uint64_t cols, DType dtype,
                                   std::vector<float> storedScales)
{
    if (!method.searches() || scheme.family != SchemeFamily::IntSymmetric) {
        throw QuantError(QuantErrorKind::InvalidScheme, "the stored scales of rounding '" +
                                                            std::string(method.name) + "' under " +
                                                            std::string(scheme.name) + " cannot be matched");
    }
    const auto width = scheme.groupSize > 0 ? static_cast<std::uint64_t>(scheme.groupSize) : cols;
    if (cols == 0 || cols % width != 0 || storedScales.size() != rows * (cols / width)) {
        throw QuantError(QuantErrorKind::BadShape,
                         "weight_scale holds " + std::to_string(storedScales.size()) + " values, a [" +
                             std::to_string(rows) + ", " + std::to_string(cols) + "] weight needs " +
                             std::to_string(rows * (cols / width)));
    }
    m_impl = std::unique_ptr<Impl>(new Impl{method, candidate::arithFor(scheme, dtype), cols, width,
                                            cols / width, std::move(storedScales)});
    m_impl->ranges->groupsPerRow = m_impl->groups;
    m_impl->ranges->mins.resize(m_impl->scales.size());
    m_impl->ranges->maxs.resize(m_impl->scales.size());
}

StoredRangeMatch::~StoredRangeMatch() = default;

void StoredRangeMatch::addRows(const WeightRows& rows)
{
    auto& s = *m_impl;
    std::vector<float> w(s.cols);
    for (std::size_t r = 0; r < rows.rowCount; ++r) {
        codec::loadRow(rows, r, w.data());
        const std::uint64_t row = rows.firstRow + r;
        for (std::size_t g = 0; g < s.groups; ++g) {
            const float* group = w.data() + g * s.width;
            for (std::size_t k = 0; k < s.width; ++k) {
                if (!std::isfinite(group[k])) {
                    throw QuantError(QuantErrorKind::NonFinite, "non-finite weight", {},
                                     row * s.cols + g * s.width + k);
                }
            }
            float lo = 0.0f, hi = 0.0f;
            kernels::groupRange(group, s.width, &lo, &hi);
            const std::size_t index = static_cast<std::size_t>(row) * s.groups + g;
            const float stored = s.scales[index];
            bool found = false;
            for (int i = 0; i < s.method.steps && !found; ++i) {
                const float mn = rtn::roundToDType(s.arith.dtype, lo * s.method.shrink(i));
                const float mx = rtn::roundToDType(s.arith.dtype, hi * s.method.shrink(i));
                if (candidate::paramsFor(s.arith, mn, mx).scale == stored) {
                    s.ranges->mins[index] = mn;
                    s.ranges->maxs[index] = mx;
                    found = true;
                }
            }
            if (!found) {
                throw QuantError(QuantErrorKind::StoredMismatch,
                                 "weight_scale of row " + std::to_string(row) + ", group " +
                                     std::to_string(g) + " is " + std::to_string(stored) + ", none of the " +
                                     std::to_string(s.method.steps) + " scales the " +
                                     std::string(s.method.name) + " rounding chooses among");
            }
        }
    }
}

std::shared_ptr<const GroupRanges> StoredRangeMatch::finish()
{
    auto& r = *m_impl->ranges;
    for (std::size_t i = 0; i < r.mins.size(); ++i) {
        r.absmax = std::max(r.absmax, std::max(-r.mins[i], r.maxs[i]));
    }
    return m_impl->ranges;
}

} // namespace spark
