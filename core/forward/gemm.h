#pragma once

#include <cstdint>
#include <string_view>

namespace spark::gemm {

/// @brief y[i, j] = Σ_k x[i, k] · w[j, k] for i < m, j < n: a block of activations times the transpose of a
/// tile of weight rows (both row-major, FP32), written with row stride @p ldy. Eigen's GEMM, compiled once
/// per x86 SIMD level (AVX-512, AVX2+FMA, baseline) and chosen at run time; NEON on arm64. Single-threaded:
/// the forward runs one call per tile on each thread of the core's pool.
void multiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w, std::int64_t n,
                        float* y, std::int64_t ldy);

/// @brief The SIMD level multiplyTransposed() runs on here: "AVX-512", "AVX2", "SSE2", "NEON".
std::string_view target();

} // namespace spark::gemm
