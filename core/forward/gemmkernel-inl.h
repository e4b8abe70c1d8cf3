// One Eigen GEMM, included by each per-SIMD-level translation unit (gemm_*.cpp) after it has renamed the
// Eigen namespace: the TUs are compiled with different -m flags, and Eigen's templates would otherwise be
// instantiated under the same names in each of them, leaving the linker free to pick an AVX-512 copy for
// the baseline path.
// GCC 12 reports its own AVX-512 intrinsics (_mm512_undefined_*) as maybe-uninitialized once Eigen inlines
// them: a false positive in the compiler's headers, silenced for these translation units only.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <cstdint>

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

inline void eigenMultiplyTransposed(const float* x, std::int64_t m, std::int64_t k, const float* w,
                                    std::int64_t n, float* y, std::int64_t ldy)
{
    const Eigen::Map<const RowMatrix> xs(x, m, k);
    const Eigen::Map<const RowMatrix> ws(w, n, k);
    Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>> ys(y, m, n, Eigen::OuterStride<>(ldy));
    ys.noalias() = xs * ws.transpose();
}

} // namespace
