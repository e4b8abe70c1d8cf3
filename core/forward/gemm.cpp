#include "core/forward/gemm.h"

#include "core/forward/bf16kernel.h"
#include "core/io/floatconv.h"

#include <algorithm>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace spark::gemm {

namespace baseline {
void multiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w, std::int64_t n,
                        float* y, std::int64_t ldy);
}
#if defined(__x86_64__)
namespace avx2 {
void multiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w, std::int64_t n,
                        float* y, std::int64_t ldy);
}
namespace avx512 {
void multiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w, std::int64_t n,
                        float* y, std::int64_t ldy);
}
namespace avx512bf16 {
void multiplyTransposedBf16(const Bf16Blocks& x, const std::uint16_t* w, std::int64_t n, float* y,
                            std::int64_t ldy);
}
namespace amx {
void multiplyTransposedBf16(const Bf16Blocks& x, const std::uint16_t* w, std::int64_t n, float* y,
                            std::int64_t ldy);
}
#endif

namespace {

using Kernel = void (*)(const float*, std::int64_t, std::int64_t, const float*, std::int64_t, float*,
                        std::int64_t);

struct Choice
{
    Kernel kernel;
    std::string_view name;
};

Choice choose()
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")) {
        return {avx512::multiplyTransposed, "AVX-512"};
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        return {avx2::multiplyTransposed, "AVX2"};
    }
    return {baseline::multiplyTransposed, "SSE2"};
#elif defined(__aarch64__)
    return {baseline::multiplyTransposed, "NEON"};
#else
    return {baseline::multiplyTransposed, "scalar"};
#endif
}

const Choice& chosen()
{
    static const Choice choice = choose();
    return choice;
}

/// The FP32 GEMM on BF16 operands widened to FP32: every product and sum as the BF16 units compute them,
/// up to the order of the sums.
void widenedMultiplyTransposedBf16(const Bf16Blocks& x, const std::uint16_t* w, std::int64_t n, float* y,
                                   std::int64_t ldy)
{
    const std::int64_t m = x.rows, k = x.cols;
    std::vector<float> xs(static_cast<std::size_t>(m * k));
    for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t c = 0; c < k; ++c) {
            const std::uint16_t* block = x.block(i / Bf16Blocks::kRowBlock, c / Bf16Blocks::kColumnBlock);
            xs[static_cast<std::size_t>(i * k + c)] = bf16ToFloat(
                block[(i % Bf16Blocks::kRowBlock) * Bf16Blocks::kColumnBlock + c % Bf16Blocks::kColumnBlock]);
        }
    }
    std::vector<float> ws(static_cast<std::size_t>(n * k));
    for (std::size_t i = 0; i < ws.size(); ++i) {
        ws[i] = bf16ToFloat(w[i]);
    }
    multiplyTransposed(xs.data(), m, k, ws.data(), n, y, ldy);
}

#if defined(__x86_64__)
/// AMX-BF16 and AMX-TILE reported by the CPU (CPUID leaf 7, EDX bits 22 and 24), AVX-512BW for the packing,
/// and the tile data state granted to this process by the kernel (Linux ≥ 5.16 asks for it explicitly).
bool amxUsable()
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 22)) || !(d & (1u << 24)) ||
        !__builtin_cpu_supports("avx512bw")) {
        return false;
    }
    constexpr long kRequestPermission = 0x1023; // ARCH_REQ_XCOMP_PERM
    constexpr long kTileData = 18;              // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
}

/// AVX512_BF16 (CPUID leaf 7 subleaf 1, EAX bit 5) with AVX-512BW for the masked loads.
bool avx512Bf16Usable()
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)) && __builtin_cpu_supports("avx512bw");
}
#endif

std::vector<Bf16Kernel> availableBf16Kernels()
{
    std::vector<Bf16Kernel> kernels;
#if defined(__x86_64__)
    if (amxUsable()) {
        kernels.push_back({"AMX", amx::multiplyTransposedBf16});
    }
    if (avx512Bf16Usable()) {
        kernels.push_back({"AVX512_BF16", avx512bf16::multiplyTransposedBf16});
    }
#endif
    kernels.push_back({std::string(chosen().name) + " (BF16 widened)", widenedMultiplyTransposedBf16});
    return kernels;
}

} // namespace

Bf16Blocks::Bf16Blocks(const float* x, std::int64_t m, std::int64_t k)
    : rows(m), cols(k),
      bits(static_cast<std::size_t>(rowBlocks() * kRowBlock * columnBlocks() * kColumnBlock), 0)
{
    std::vector<std::uint16_t> row(static_cast<std::size_t>(k));
    for (std::int64_t i = 0; i < m; ++i) {
        kernels::toBf16(x + i * k, static_cast<std::size_t>(k), row.data());
        for (std::int64_t b = 0; b < columnBlocks(); ++b) {
            const std::int64_t first = b * kColumnBlock;
            std::copy_n(row.data() + first, std::min(kColumnBlock, k - first),
                        bits.begin() + blockOffset(i / kRowBlock, b) + (i % kRowBlock) * kColumnBlock);
        }
    }
}

const std::vector<Bf16Kernel>& bf16Kernels()
{
    static const std::vector<Bf16Kernel> kernels = availableBf16Kernels();
    return kernels;
}

void multiplyTransposedBf16(const Bf16Blocks& x, const std::uint16_t* w, std::int64_t n, float* y,
                            std::int64_t ldy)
{
    bf16Kernels().front().multiply(x, w, n, y, ldy);
}

std::string_view bf16Target()
{
    return bf16Kernels().front().name;
}

void multiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w, std::int64_t n,
                        float* y, std::int64_t ldy)
{
    chosen().kernel(x, m, k, w, n, y, ldy);
}

std::string_view target()
{
    return chosen().name;
}

} // namespace spark::gemm
