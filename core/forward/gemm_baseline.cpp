#define Eigen EigenBaseline // see gemmkernel-inl.h
#include "core/forward/gemmkernel-inl.h"

namespace spark::gemm::baseline {

void multiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w, std::int64_t n,
                        float* y, std::int64_t ldy)
{
    eigenMultiplyTransposed(x, m, k, w, n, y, ldy);
}

} // namespace spark::gemm::baseline
