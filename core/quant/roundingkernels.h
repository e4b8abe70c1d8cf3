#pragma once

#include "core/quant/candidatequant.h"
#include "core/quant/roundingmethod.h"

#include <cstddef>

/// @brief The SIMD kernel behind RangeSearch (internal to core/quant): every candidate of one group scored
/// while the group sits in the L1 cache.
namespace spark::kernels {

/// @brief The most candidates one call scores (RangeSearch allows 64 steps).
inline constexpr std::size_t kMaxCandidates = 64;

/// @brief Whether candidateErrorSums() handles @p error on weights of @p dtype: all but DTypeLp on F32
/// weights, whose pow has no lookup table (RangeSearch scores those with the scalar definitions).
bool candidateKernelSupports(RoundingError error, DType dtype);

/// @brief For every candidate i < @p count (<= kMaxCandidates) the sum over the @p n weights @p w of one
/// group of its error term, into @p sums[i]: F32L2 `f32(deq - w)²`, DTypeLp `powTable[bits(|rnd(deq - w)|)]`
/// (the 15 magnitude bits of the 16-bit dtype; powTable[0] must be 0), deq being candidate::dequantize()
/// under @p params[i].
/// F32L2 sums are accumulated in float64 in the order k = 0 .. n-1: bit for bit the scalar loop's.
/// DTypeLp sums are accumulated in float in the kernel's own order: within lpSumTolerance(n) of the exact sum
/// (relative), which decides the sum's rounding to the dtype except near a rounding midpoint.
void candidateErrorSums(const candidate::Arith& arith, RoundingError error, const float* powTable,
                        const float* w, std::size_t n, const candidate::Params* params, std::size_t count,
                        double* sums);

/// @brief How far (relative) a DTypeLp sum of candidateErrorSums() over @p n terms may lie from the scalar
/// loop's float64 sum: every term is exact and non-negative, so each of the n - 1 float additions errs by at
/// most 2^-24 of the final sum (none when its result is subnormal), the float64 ones by 2^-53; the rest is
/// slack for the float64 arithmetic that applies the bound.
inline double lpSumTolerance(std::size_t n)
{
    return static_cast<double>(n) * (0x1p-24 + 0x1p-50) + 0x1p-50;
}

} // namespace spark::kernels
