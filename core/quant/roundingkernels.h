#pragma once

#include "core/quant/candidatequant.h"
#include "core/quant/roundingmethod.h"

#include <cstddef>

/// @brief The SIMD kernel behind RangeSearch (internal to core/quant): every candidate of one group scored
/// while the group sits in the L1 cache, one candidate per vector lane.
namespace spark::kernels {

/// @brief The most candidates one call scores (RangeSearch allows 64 steps).
inline constexpr std::size_t kMaxCandidates = 64;

/// @brief Whether candidateErrorSums() handles @p error on weights of @p dtype: all but DTypeLp on F32
/// weights, whose pow has no lookup table (RangeSearch scores those with the scalar definitions).
bool candidateKernelSupports(RoundingError error, DType dtype);

/// @brief For every candidate i < @p count (<= kMaxCandidates) the sum over the @p n weights @p w of one
/// group of its error term, into @p sums[i]: DTypeLp `powTable[bits(|rnd(deq - w)|)]` (the 15 magnitude
/// bits of the 16-bit dtype), F32L2 `f32(deq - w)²`, deq being candidate::dequantize() under @p params[i].
/// Each sum is accumulated in float64 in the order k = 0 .. n-1, so it is bit for bit the scalar loop's.
void candidateErrorSums(const candidate::Arith& arith, RoundingError error, const float* powTable,
                        const float* w, std::size_t n, const candidate::Params* params, std::size_t count,
                        double* sums);

} // namespace spark::kernels
