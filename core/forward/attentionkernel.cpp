// The attention's inner loop (attentionkernel.h), one copy per Highway target: dot products with a vector
// of partial sums, Highway's vector exp, and the weighted sum of values accumulated per feature.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "core/forward/attentionkernel.cpp"
#include <hwy/foreach_target.h> // must precede highway.h
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
// clang-format on

#include "core/forward/attentionkernel.h"

#include <algorithm>
#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace spark::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace {

using DF = hn::ScalableTag<float>;

/// Σ_d q[d] · k[d]: whole vectors with fused multiply-adds, the tail in scalar.
HWY_INLINE float Dot(DF df, const float* q, const float* k, std::int64_t dim)
{
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(df));
    auto acc = hn::Zero(df);
    std::int64_t d = 0;
    for (; d + lanes <= dim; d += lanes) {
        acc = hn::MulAdd(hn::LoadU(df, q + d), hn::LoadU(df, k + d), acc);
    }
    float sum = hn::GetLane(hn::SumOfLanes(df, acc));
    for (; d < dim; ++d) {
        sum += q[d] * k[d];
    }
    return sum;
}

/// scores[i] = scale · q · key(i) for i < count; four keys at a time when the head is whole vectors, so that
/// four sums are in flight per load of q.
template <class KeyOf>
HWY_INLINE void Scores(DF df, const float* q, const KeyOf& keyOf, std::int64_t count, std::int64_t headDim,
                       float scale, float* scores)
{
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(df));
    std::int64_t i = 0;
    if (headDim % lanes == 0) {
        for (; i + 4 <= count; i += 4) {
            const float* k0 = keyOf(i);
            const float* k1 = keyOf(i + 1);
            const float* k2 = keyOf(i + 2);
            const float* k3 = keyOf(i + 3);
            auto a0 = hn::Zero(df), a1 = hn::Zero(df), a2 = hn::Zero(df), a3 = hn::Zero(df);
            for (std::int64_t d = 0; d < headDim; d += lanes) {
                const auto qd = hn::LoadU(df, q + d);
                a0 = hn::MulAdd(qd, hn::LoadU(df, k0 + d), a0);
                a1 = hn::MulAdd(qd, hn::LoadU(df, k1 + d), a1);
                a2 = hn::MulAdd(qd, hn::LoadU(df, k2 + d), a2);
                a3 = hn::MulAdd(qd, hn::LoadU(df, k3 + d), a3);
            }
            scores[i] = hn::GetLane(hn::SumOfLanes(df, a0)) * scale;
            scores[i + 1] = hn::GetLane(hn::SumOfLanes(df, a1)) * scale;
            scores[i + 2] = hn::GetLane(hn::SumOfLanes(df, a2)) * scale;
            scores[i + 3] = hn::GetLane(hn::SumOfLanes(df, a3)) * scale;
        }
    }
    for (; i < count; ++i) {
        scores[i] = Dot(df, q, keyOf(i), headDim) * scale;
    }
}

} // namespace

void AttendHead(const float* q, const kernels::HeadKeys& a, const kernels::HeadKeys& b, std::int64_t headDim,
                float scale, float* scores, float* out)
{
    const DF df;
    const auto lanes = static_cast<std::int64_t>(hn::Lanes(df));
    const std::int64_t count = a.count + b.count;
    const auto keyOf = [&](std::int64_t i) {
        return i < a.count ? a.keys + i * a.stride : b.keys + (i - a.count) * b.stride;
    };
    const auto valueOf = [&](std::int64_t i) {
        return i < a.count ? a.values + i * a.stride : b.values + (i - a.count) * b.stride;
    };
    Scores(df, q, keyOf, count, headDim, scale, scores);
    float maxScore = -INFINITY;
    for (std::int64_t i = 0; i < count; ++i) {
        maxScore = std::max(maxScore, scores[i]);
    }
    // exp(s − max) a vector at a time; the padding lanes hold the maximum (exp 0 = 1) and are not summed.
    const std::int64_t padded = (count + lanes - 1) / lanes * lanes;
    std::fill(scores + count, scores + padded, maxScore);
    const auto vmax = hn::Set(df, maxScore);
    for (std::int64_t i = 0; i < padded; i += lanes) {
        hn::StoreU(hn::CallExp(df, hn::Sub(hn::LoadU(df, scores + i), vmax)), df, scores + i);
    }
    float total = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        total += scores[i];
    }
    for (std::int64_t i = 0; i < count; ++i) {
        scores[i] /= total;
    }
    // out = Σ_i p_i · v_i, four vectors of features at a time so that their sums stay in registers.
    std::int64_t d = 0;
    for (; d + 4 * lanes <= headDim; d += 4 * lanes) {
        auto o0 = hn::Zero(df), o1 = hn::Zero(df), o2 = hn::Zero(df), o3 = hn::Zero(df);
        for (std::int64_t i = 0; i < count; ++i) {
            const float* v = valueOf(i) + d;
            const auto p = hn::Set(df, scores[i]);
            o0 = hn::MulAdd(p, hn::LoadU(df, v), o0);
            o1 = hn::MulAdd(p, hn::LoadU(df, v + lanes), o1);
            o2 = hn::MulAdd(p, hn::LoadU(df, v + 2 * lanes), o2);
            o3 = hn::MulAdd(p, hn::LoadU(df, v + 3 * lanes), o3);
        }
        hn::StoreU(o0, df, out + d);
        hn::StoreU(o1, df, out + d + lanes);
        hn::StoreU(o2, df, out + d + 2 * lanes);
        hn::StoreU(o3, df, out + d + 3 * lanes);
    }
    for (; d + lanes <= headDim; d += lanes) {
        auto o = hn::Zero(df);
        for (std::int64_t i = 0; i < count; ++i) {
            o = hn::MulAdd(hn::Set(df, scores[i]), hn::LoadU(df, valueOf(i) + d), o);
        }
        hn::StoreU(o, df, out + d);
    }
    for (; d < headDim; ++d) {
        float o = 0;
        for (std::int64_t i = 0; i < count; ++i) {
            o += scores[i] * valueOf(i)[d];
        }
        out[d] = o;
    }
}

} // namespace spark::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace spark::kernels {

HWY_EXPORT(AttendHead);

void attendHead(const float* q, const HeadKeys& a, const HeadKeys& b, std::int64_t headDim, float scale,
                float* scratch, float* out)
{
    HWY_DYNAMIC_DISPATCH(AttendHead)(q, a, b, headDim, scale, scratch, out);
}

} // namespace spark::kernels
#endif
