#include "core/forward/gemm.h"

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

} // namespace

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
