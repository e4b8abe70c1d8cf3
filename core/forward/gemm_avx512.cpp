// Compiled with the avx512 flags on x86-64 only (core/CMakeLists.txt); empty elsewhere.
namespace spark::gemm {
} // namespace spark::gemm

#if defined(__x86_64__)
#define Eigen EigenAvx512 // see gemmkernel-inl.h
#include "core/forward/gemmkernel-inl.h"

namespace spark::gemm::avx512 {

void multiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w, std::int64_t n,
                        float* y, std::int64_t ldy)
{
    eigenMultiplyTransposed(x, m, k, w, n, y, ldy);
}

} // namespace spark::gemm::avx512
#endif
