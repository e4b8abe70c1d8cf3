#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spark::gemm {

/// @brief y[i, j] = Σ_k x[i, k] · w[j, k] for i < m, j < n: a block of activations times the transpose of a
/// tile of weight rows (both row-major, FP32), written with row stride @p ldy. Eigen's GEMM, compiled once
/// per x86 SIMD level (AVX-512, AVX2+FMA, baseline) and chosen at run time; NEON on arm64. Single-threaded:
/// the forward runs one call per tile on each thread of the core's pool.
void multiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w, std::int64_t n,
                        float* y, std::int64_t ldy);

/// @brief The SIMD level multiplyTransposed() runs on here: "AVX-512", "AVX2", "SSE2", "NEON".
std::string_view target();

/// @brief m × k activations rounded to BF16 (nearest even) in the layout the BF16 kernels read: blocks of
/// kRowBlock rows × kColumnBlock columns, each contiguous and row-major inside, ordered by row block
/// then column block, zero past row m and column k (an AMX tile loads one block as 1 KiB in a row).
struct Bf16Blocks
{
    static constexpr std::int64_t kRowBlock = 16;
    static constexpr std::int64_t kColumnBlock = 32;

    std::int64_t rows = 0, cols = 0;
    std::vector<std::uint16_t> bits;

    /// @brief From row-major FP32 @p x.
    Bf16Blocks(const float* x, std::int64_t m, std::int64_t k);
    std::int64_t rowBlocks() const { return (rows + kRowBlock - 1) / kRowBlock; }
    std::int64_t columnBlocks() const { return (cols + kColumnBlock - 1) / kColumnBlock; }
    /// @brief The block of rows [16·rowBlock, +16) and columns [32·columnBlock, +32).
    const std::uint16_t* block(std::int64_t rowBlock, std::int64_t columnBlock) const
    {
        return bits.data() + blockOffset(rowBlock, columnBlock);
    }
    std::int64_t blockOffset(std::int64_t rowBlock, std::int64_t columnBlock) const
    {
        return (rowBlock * columnBlocks() + columnBlock) * kRowBlock * kColumnBlock;
    }
};

/// @brief The serving numerics' GEMM (draft-forward.md §9): y[i, j] = Σ_k x[i, k] · w[j, k] on BF16
/// operands, every product exact in FP32 and the sums in FP32, in the kernel's order. @p w: n rows of
/// x.cols BF16 values (bit patterns), contiguous. On AMX tiles where the CPU has them and the OS grants
/// them (inputs and outputs below FP32's normal range count as zero there), else multiplyTransposed() on the
/// operands widened to FP32 (exact). Single-threaded, like it.
void multiplyTransposedBf16(const Bf16Blocks& x, const std::uint16_t* w, std::int64_t n, float* y,
                            std::int64_t ldy);

/// @brief Where multiplyTransposedBf16() runs here: "AMX", or target() followed by " (BF16 widened)".
std::string_view bf16Target();

/// @brief A BF16 GEMM kernel this machine runs, by name.
struct Bf16Kernel
{
    std::string name;
    void (*multiply)(const Bf16Blocks& x, const std::uint16_t* w, std::int64_t n, float* y, std::int64_t ldy);
};

/// @brief Every BF16 kernel this machine can run, best first (multiplyTransposedBf16() runs the first): the
/// tests hold each to the same sums.
const std::vector<Bf16Kernel>& bf16Kernels();

} // namespace spark::gemm
