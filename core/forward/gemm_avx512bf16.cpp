// The serving numerics' GEMM on AVX512_BF16 (VDPBF16PS: pairs of BF16 products added to FP32 lanes), for CPUs
// with BF16 dot products but no AMX tiles. Compiled with those flags on x86-64 only (core/CMakeLists.txt);
// empty elsewhere. gemm.cpp calls it only after the CPU reported AVX512_BF16.
#if defined(__x86_64__)
#include "core/forward/gemm.h"

// GCC 12 reports its own AVX-512 intrinsics (_mm512_undefined_*) as maybe-uninitialized once they are
// inlined: a false positive in the compiler's headers (as in gemmkernel-inl.h), silenced for this file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <algorithm>
#include <immintrin.h>

namespace spark::gemm::avx512bf16 {
namespace {

constexpr int kRows = 4; // activation rows per pass (always present: the blocks are zero-padded to 16 rows)

/// y[i + r, j + c] for r < kRows, c < NR: each a vector of 16 partial dot products over the whole depth,
/// summed across lanes at the end. Rows of w are read with a mask at the depth's end.
template <int NR>
void multiplyBlock(const Bf16Blocks& x, std::int64_t i, const std::uint16_t* w, std::int64_t j, float* y,
                   std::int64_t ldy, std::int64_t rows)
{
    const std::int64_t k = x.cols;
    // The loops over r and c are unrolled so that the accumulators live in registers.
    __m512 acc[kRows][NR];
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
        for (int c = 0; c < NR; ++c) {
            acc[r][c] = _mm512_setzero_ps();
        }
    }
    for (std::int64_t kb = 0; kb < x.columnBlocks(); ++kb) {
        const std::int64_t left = k - kb * Bf16Blocks::kColumnBlock;
        const __mmask32 mask = left >= 32 ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
        __m512bh b[NR];
#pragma GCC unroll 4
        for (int c = 0; c < NR; ++c) {
            b[c] = (__m512bh)_mm512_maskz_loadu_epi16(mask, w + (j + c) * k + kb * Bf16Blocks::kColumnBlock);
        }
        const std::uint16_t* block = x.block(i / Bf16Blocks::kRowBlock, kb);
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) {
            const auto a = (__m512bh)_mm512_loadu_si512(block + (i % Bf16Blocks::kRowBlock + r) * 32);
#pragma GCC unroll 4
            for (int c = 0; c < NR; ++c) {
                acc[r][c] = _mm512_dpbf16_ps(acc[r][c], a, b[c]);
            }
        }
    }
    for (int r = 0; r < kRows && i + r < rows; ++r) {
        for (int c = 0; c < NR; ++c) {
            y[(i + r) * ldy + j + c] = _mm512_reduce_add_ps(acc[r][c]);
        }
    }
}

} // namespace

void multiplyTransposedBf16(const Bf16Blocks& x, const std::uint16_t* w, std::int64_t n, float* y,
                            std::int64_t ldy)
{
    constexpr int kColumns = 4;
    for (std::int64_t j = 0; j < n; j += kColumns) {
        for (std::int64_t i = 0; i < x.rows; i += kRows) {
            switch (std::min<std::int64_t>(kColumns, n - j)) {
            case 4:
                multiplyBlock<4>(x, i, w, j, y, ldy, x.rows);
                break;
            case 3:
                multiplyBlock<3>(x, i, w, j, y, ldy, x.rows);
                break;
            case 2:
                multiplyBlock<2>(x, i, w, j, y, ldy, x.rows);
                break;
            default:
                multiplyBlock<1>(x, i, w, j, y, ldy, x.rows);
            }
        }
    }
}

} // namespace spark::gemm::avx512bf16
#endif
