#pragma once

#include "core/quant/candidatequant.h"
#include "core/quant/roundingmethod.h"

#include <cstddef>

/// @brief The SIMD kernel behind RangeSearch (internal to core/quant): every candidate of one group scored
/// while the group sits in the L1 cache.
namespace spark::kernels {

/// @brief The most candidates one call scores (RangeSearch allows 64 steps).
inline constexpr std::size_t kMaxCandidates = 64;

/// @brief The DTypeLp term pow(|d|, n) rounded to a 16-bit dtype, as the kernel looks it up (PowTable builds
/// it).
struct PowLookup
{
    const float* byBits = nullptr; ///< by the 15 magnitude bits of the dtype; byBits[0] = 0
    /// BF16 only, else null: for a magnitude (1 + m/128)·2^(e-127) with e in [minExponent, maxExponent] the
    /// term is also bf16(f32(mantissaPowers[m]·fractionPowers[f])·2^k), where 32k + f = numerator·(e - 127)
    /// and numerator = 32n: small enough tables for registers on targets with two-table permutes.
    const float* mantissaPowers = nullptr; ///< 128: f32((1 + m/128)^n)
    const float* fractionPowers = nullptr; ///< 32: f32(2^(f/32))
    int numerator = 0;
    int minExponent = 0;
    int maxExponent = -1;
};

/// @brief Whether candidateErrorSums() handles @p error on weights of @p dtype: all but DTypeLp on F32
/// weights, whose pow has no lookup table (RangeSearch scores those with the scalar definitions).
bool candidateKernelSupports(RoundingError error, DType dtype);

/// @brief For every candidate i < @p count (<= kMaxCandidates) the sum over the @p n weights @p w of one
/// group of its error term, into @p sums[i]: F32L2 `f32(deq - w)²`, DTypeLp `pow.byBits[bits(|rnd(deq -
/// w)|)]` (the 15 magnitude bits of the 16-bit dtype), deq being candidate::dequantize() under @p params[i].
/// F32L2 sums are accumulated in float64 in the order k = 0 .. n-1: bit for bit the scalar loop's.
/// DTypeLp sums are accumulated in float in the kernel's own order: within lpSumTolerance(n) of the exact sum
/// (relative), which decides the sum's rounding to the dtype except near a rounding midpoint.
void candidateErrorSums(const candidate::Arith& arith, RoundingError error, const PowLookup& pow,
                        const float* w, std::size_t n, const candidate::Params* params, std::size_t count,
                        double* sums);

/// @brief min(0, w) and max(0, w) over the @p n finite weights @p w of a group, zeros as +0.
void groupRange(const float* w, std::size_t n, float* lo, float* hi);

/// @brief The DTypeLp term of each of the @p n non-negative @p dtype values @p a (BF16 or F16), into @p out:
/// the kernel's lookup on its own, for tests.
void powTerms(const PowLookup& pow, DType dtype, const float* a, std::size_t n, float* out);

/// @brief How far (relative) a DTypeLp sum of candidateErrorSums() over @p n terms may lie from the scalar
/// loop's float64 sum: every term is exact and non-negative, so each of the n - 1 float additions errs by at
/// most 2^-24 of the final sum (none when its result is subnormal), the float64 ones by 2^-53; the rest is
/// slack for the float64 arithmetic that applies the bound.
inline double lpSumTolerance(std::size_t n)
{
    return static_cast<double>(n) * (0x1p-24 + 0x1p-50) + 0x1p-50;
}

} // namespace spark::kernels
