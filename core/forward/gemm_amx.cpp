// The serving numerics' GEMM on AMX tiles (TDPBF16PS: BF16 products summed in FP32). Compiled with the AMX
// and AVX-512 flags on x86-64 only (core/CMakeLists.txt); empty elsewhere. gemm.cpp calls it only after the
// CPU reported AMX-BF16 and the kernel granted this process the tile state.
#if defined(__x86_64__)
#include "core/forward/gemm.h"

// GCC 12 reports its own AVX-512 intrinsics (_mm512_undefined_*) as maybe-uninitialized once they are
// inlined: a false positive in the compiler's headers (as in gemmkernel-inl.h), silenced for this file.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <algorithm>
#include <cstring>
#include <immintrin.h>
#include <vector>

namespace spark::gemm::amx {
namespace {

// Tiles 0–3 accumulate a 32×32 block of y, 4–5 hold 16 rows × 32 columns of x each, 6–7 hold 16 columns of
// Wᵀ each, 32 k deep, in the pair-interleaved (VNNI) layout TDPBF16PS reads.
struct alignas(64) TileConfig
{
    std::uint8_t palette = 1;
    std::uint8_t startRow = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t bytesPerRow[16] = {};
    std::uint8_t rows[16] = {};
};

constexpr std::int64_t kTileWords = 16 * 16; // one packed B tile: 16 k-pairs × 16 columns of 32-bit pairs

/// In-register 16×16 transpose of 32-bit lanes.
void transpose16(__m512i r[16])
{
    __m512i t[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; ++i) {
        r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 4; ++j) {
            t[8 * i + j] = _mm512_shuffle_i32x4(r[8 * i + j], r[8 * i + 4 + j], 0x88);
            t[8 * i + 4 + j] = _mm512_shuffle_i32x4(r[8 * i + j], r[8 * i + 4 + j], 0xdd);
        }
    }
    for (int j = 0; j < 8; ++j) {
        r[j] = _mm512_shuffle_i32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_i32x4(t[j], t[8 + j], 0xdd);
    }
}

/// Weight rows [n, k] into B tiles [n / 16][k / 32] (both rounded up, zero-padded): tile row p holds, for
/// each of 16 weight rows, the pair (w[j, 2p], w[j, 2p + 1]) — 16×16 transposes of 32-bit pairs.
void packWeights(const std::uint16_t* w, std::int64_t n, std::int64_t k, std::int64_t kBlocks,
                 std::uint32_t* out)
{
    const std::int64_t nBlocks = (n + 15) / 16;
    for (std::int64_t nb = 0; nb < nBlocks; ++nb) {
        const std::int64_t rows = std::min<std::int64_t>(16, n - nb * 16);
        for (std::int64_t kb = 0; kb < kBlocks; ++kb) {
            const std::int64_t cols = std::clamp<std::int64_t>(k - kb * 32, 0, 32);
            const __mmask32 mask = cols >= 32 ? ~__mmask32{0} : (__mmask32{1} << cols) - 1;
            __m512i r[16];
            for (std::int64_t j = 0; j < 16; ++j) {
                r[j] = j < rows ? _mm512_maskz_loadu_epi16(mask, w + (nb * 16 + j) * k + kb * 32)
                                : _mm512_setzero_si512();
            }
            transpose16(r);
            std::uint32_t* tile = out + (nb * kBlocks + kb) * kTileWords;
            for (int p = 0; p < 16; ++p) {
                _mm512_storeu_si512(tile + p * 16, r[p]);
            }
        }
    }
}

/// One (16·MB)×(16·NB) block of y into @p c (row stride 32 floats), the whole depth: @p a is the first of
/// the row blocks' column blocks (the second row block follows after @p aStride values), @p b the first
/// column block's B tiles (the second follows after @p bStride words).
template <int MB, int NB>
void multiplyBlock(const std::uint16_t* a, std::int64_t aStride, const std::uint32_t* b, std::int64_t bStride,
                   std::int64_t kBlocks, float* c)
{
    constexpr std::int64_t kBlockValues = Bf16Blocks::kRowBlock * Bf16Blocks::kColumnBlock;
    _tile_zero(0);
    if constexpr (NB == 2) {
        _tile_zero(1);
    }
    if constexpr (MB == 2) {
        _tile_zero(2);
    }
    if constexpr (MB == 2 && NB == 2) {
        _tile_zero(3);
    }
    for (std::int64_t kb = 0; kb < kBlocks; ++kb) {
        _tile_loadd(4, a + kb * kBlockValues, 64);
        _tile_loadd(6, b + kb * kTileWords, 64);
        _tile_dpbf16ps(0, 4, 6);
        if constexpr (NB == 2) {
            _tile_loadd(7, b + bStride + kb * kTileWords, 64);
            _tile_dpbf16ps(1, 4, 7);
        }
        if constexpr (MB == 2) {
            _tile_loadd(5, a + aStride + kb * kBlockValues, 64);
            _tile_dpbf16ps(2, 5, 6);
        }
        if constexpr (MB == 2 && NB == 2) {
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    _tile_stored(0, c, 128);
    if constexpr (NB == 2) {
        _tile_stored(1, c + 16, 128);
    }
    if constexpr (MB == 2) {
        _tile_stored(2, c + 16 * 32, 128);
    }
    if constexpr (MB == 2 && NB == 2) {
        _tile_stored(3, c + 16 * 32 + 16, 128);
    }
}

} // namespace

void multiplyTransposedBf16(const Bf16Blocks& x, const std::uint16_t* w, std::int64_t n, float* y,
                            std::int64_t ldy)
{
    // The tile configuration is per thread; the pool's threads load it on their first call.
    thread_local bool configured = false;
    if (!configured) {
        TileConfig config;
        for (int t = 0; t < 8; ++t) {
            config.rows[t] = 16;
            config.bytesPerRow[t] = 64;
        }
        _tile_loadconfig(&config);
        configured = true;
    }
    const std::int64_t m = x.rows;
    const std::int64_t kBlocks = x.columnBlocks();
    const std::int64_t nBlocks = (n + 15) / 16;
    thread_local std::vector<std::uint32_t> packed;
    packed.resize(static_cast<std::size_t>(nBlocks * kBlocks * kTileWords));
    packWeights(w, n, x.cols, kBlocks, packed.data());
    const std::int64_t aStride = kBlocks * Bf16Blocks::kRowBlock * Bf16Blocks::kColumnBlock;
    const std::int64_t bStride = kBlocks * kTileWords;
    alignas(64) float c[32 * 32];
    for (std::int64_t nb = 0; nb < nBlocks; nb += 2) {
        const bool twoColumns = nb + 1 < nBlocks;
        const std::uint32_t* b = packed.data() + nb * bStride;
        for (std::int64_t row = 0; row < m; row += 32) {
            const bool twoRows = row + 16 < m;
            const std::uint16_t* a = x.block(row / Bf16Blocks::kRowBlock, 0);
            if (twoRows && twoColumns) {
                multiplyBlock<2, 2>(a, aStride, b, bStride, kBlocks, c);
            } else if (twoRows) {
                multiplyBlock<2, 1>(a, aStride, b, bStride, kBlocks, c);
            } else if (twoColumns) {
                multiplyBlock<1, 2>(a, aStride, b, bStride, kBlocks, c);
            } else {
                multiplyBlock<1, 1>(a, aStride, b, bStride, kBlocks, c);
            }
            const std::int64_t rows = std::min<std::int64_t>(32, m - row);
            const std::int64_t cols = std::min<std::int64_t>(32, n - nb * 16);
            for (std::int64_t i = 0; i < rows; ++i) {
                std::memcpy(y + (row + i) * ldy + nb * 16, c + i * 32, static_cast<std::size_t>(cols) * 4);
            }
        }
    }
}

} // namespace spark::gemm::amx
#endif
