#include "core/quant/gptq.h"

#include "core/quant/candidatequant.h"
#include "core/quant/quanterror.h"
#include "core/util/parallel.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>

namespace spark {
namespace {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMapD = Eigen::Map<const MatrixD>;

constexpr std::int64_t kRowsPerTask = 64;

/// The parameters of every group, computed once from the original weight's ranges.
struct GroupParams
{
    candidate::Arith arith;
    std::int64_t groupSize = 0;
    std::size_t groupsPerRow = 0;
    std::vector<candidate::Params> params; ///< [row][group]

    const candidate::Params& at(std::int64_t row, std::int64_t col) const
    {
        return params[static_cast<std::size_t>(row) * groupsPerRow +
                      static_cast<std::size_t>(col / groupSize)];
    }
};

/// GPTQ's column quantizer: the FP32 column divided by the scale (not CT RTN's quotient rounded to the
/// weight dtype first, rounding.md §2.3 item 9), plus the zero point, clamped, rounded half to even, and
/// dequantized in the dtype: Q = dtype((q − zp)·s), as LC's fake_quantize. The value returned is the one
/// the checkpoint will hold: compressed-tensors' compressor re-quantizes Q through the dtype quotient
/// dtype(Q/s). For 4-bit codes, and for 8-bit codes of F16/F32 weights, that gives back q, so the value
/// is Q itself; for 8-bit codes of BF16 weights about 3% of the grid values bf16(q·s) re-quantize to the
/// neighbouring code (bf16 holds |Q/s| in [64, 128) to 0.5 only). LC feeds Q back and stores the other
/// code; feeding back the stored value keeps the error compensation and the reported error true to the
/// checkpoint. The re-quantization is idempotent, so the result re-encodes to itself.
float gptqQuantize(const candidate::Arith& a, const candidate::Params& p, float w)
{
    const float x = std::clamp(w / p.scale + p.zeroPoint, a.qMin, a.qMax);
    const float q = rtn::roundHalfEven(x);
    // q and the zero point are small integers: their difference is exact in float.
    const float solved = rtn::roundToDType(a.dtype, (q - p.zeroPoint) * p.scale);
    return candidate::dequantize(a, p, solved);
}

/// Solves the @p n rows from global row @p r0 of the [rows, cols] @p weight into @p out: LC's column loop
/// (rounding.md §2.3 item 7) with the rounding error of each column, scaled by 1/U[i,i], pushed onto the
/// later columns through row i of @p u, lazily per block of @p blockSize columns. W and the updates are
/// FP32 like LC's. Rows never mix, so a row's result does not depend on how rows are grouped into tasks.
void solveRows(const float* weight, std::int64_t r0, std::int64_t n, std::int64_t cols, const MatrixF& u,
               const GroupParams& params, const std::vector<bool>& dead, std::int64_t blockSize, float* out)
{
    MatrixF w = Eigen::Map<const MatrixF>(weight + r0 * cols, n, cols);
    for (std::int64_t c = 0; c < cols; ++c) {
        if (dead[static_cast<std::size_t>(c)]) {
            w.col(c).setZero();
        }
    }
    Eigen::Map<MatrixF> q(out + r0 * cols, n, cols);
    for (std::int64_t b0 = 0; b0 < cols; b0 += blockSize) {
        const std::int64_t b1 = std::min(cols, b0 + blockSize);
        MatrixF err(n, b1 - b0);
        for (std::int64_t i = b0; i < b1; ++i) {
            const float d = u(i, i);
            for (std::int64_t r = 0; r < n; ++r) {
                const float value = w(r, i);
                const float quantized = gptqQuantize(params.arith, params.at(r0 + r, i), value);
                q(r, i) = quantized;
                err(r, i - b0) = (value - quantized) / d;
            }
            if (i + 1 < b1) {
                w.block(0, i + 1, n, b1 - i - 1).noalias() -=
                    err.col(i - b0) * u.block(i, i + 1, 1, b1 - i - 1);
            }
        }
        if (b1 < cols) {
            w.rightCols(cols - b1).noalias() -= err * u.block(b0, b1, b1 - b0, cols - b1);
        }
    }
}

/// Output energies under @p h of the @p n rows from @p r0, in FP64: tr(W H Wᵀ), then tr(E H Eᵀ) for
/// GPTQ's @p solved weight and for CT's RTN (bf16 quotient) under the same parameters. The three row sets
/// go through one product so that H is streamed once per task.
std::array<double, 3> outputEnergies(const float* weight, const float* solved, std::int64_t r0,
                                     std::int64_t n, std::int64_t cols, const GroupParams& params,
                                     const ConstMapD& h)
{
    MatrixD e(3 * n, cols);
    for (std::int64_t r = 0; r < n; ++r) {
        for (std::int64_t c = 0; c < cols; ++c) {
            const float w = weight[(r0 + r) * cols + c];
            e(r, c) = w;
            e(n + r, c) = static_cast<double>(w) - solved[(r0 + r) * cols + c];
            e(2 * n + r, c) =
                static_cast<double>(w) - candidate::dequantize(params.arith, params.at(r0 + r, c), w);
        }
    }
    const Eigen::VectorXd perRow = (e * h).cwiseProduct(e).rowwise().sum();
    return {perRow.head(n).sum(), perRow.segment(n, n).sum(), perRow.tail(n).sum()};
}

GroupParams groupParams(const WeightScheme& scheme, DType dtype, std::int64_t group,
                        const GroupRanges& ranges)
{
    GroupParams params;
    params.arith = candidate::arithFor(scheme, dtype);
    params.groupSize = group;
    params.groupsPerRow = ranges.groupsPerRow;
    params.params.resize(ranges.mins.size());
    for (std::size_t i = 0; i < ranges.mins.size(); ++i) {
        params.params[i] = candidate::paramsFor(params.arith, ranges.mins[i], ranges.maxs[i]);
    }
    return params;
}

/// LC's inverse factor (rounding.md §2.3 item 6): U upper triangular with (H + λI)⁻¹ = UᵀU, through
/// cholesky, cholesky_inverse and an upper cholesky, for the @p damped H. The factorizations run in FP64
/// (LC: FP32; damping keeps both well conditioned, and FP64 only makes U closer to exact) and in place,
/// so that at most two [cols, cols] FP64 matrices live at once (down_proj: 14336² · 8 B = 1.6 GB each).
/// U comes back in FP32 because LC's column updates are FP32. Empty, with @p why set, when a
/// factorization meets a non-positive pivot (torch's _LinAlgError).
MatrixF inverseFactor(MatrixD damped, std::string& why)
{
    const auto n = damped.rows();
    MatrixD inverse = MatrixD::Identity(n, n);
    {
        Eigen::LLT<Eigen::Ref<MatrixD>> lower(damped); // damped's lower triangle becomes L
        if (lower.info() != Eigen::Success) {
            why = "the damped Hessian is not positive definite (Cholesky failed)";
            return {};
        }
        lower.solveInPlace(inverse);
    }
    damped = MatrixD();
    Eigen::LLT<Eigen::Ref<MatrixD>> upper(inverse); // inverse's lower triangle becomes Uᵀ
    if (upper.info() != Eigen::Success) {
        why = "the inverse of the damped Hessian is not positive definite (Cholesky failed)";
        return {};
    }
    MatrixF u = MatrixF::Zero(n, n);
    u.triangularView<Eigen::Upper>() = inverse.transpose().cast<float>();
    return u;
}

} // namespace

bool gptqSupports(const WeightScheme& scheme)
{
    return scheme.family == SchemeFamily::IntSymmetric || scheme.family == SchemeFamily::IntAsymmetric;
}

GroupRanges minMaxRanges(const WeightScheme& scheme, const float* weight, std::int64_t rows,
                         std::int64_t cols)
{
    const std::int64_t group = scheme.groupSize < 0 ? cols : scheme.groupSize;
    GroupRanges r;
    r.groupsPerRow = static_cast<std::size_t>(cols / group);
    r.mins.resize(static_cast<std::size_t>(rows) * r.groupsPerRow);
    r.maxs.resize(r.mins.size());
    for (std::int64_t row = 0; row < rows; ++row) {
        for (std::size_t g = 0; g < r.groupsPerRow; ++g) {
            const float* w = weight + row * cols + static_cast<std::int64_t>(g) * group;
            float mn = 0.0f;
            float mx = 0.0f;
            for (std::int64_t k = 0; k < group; ++k) {
                mn = std::min(mn, w[k]);
                mx = std::max(mx, w[k]);
            }
            r.mins[static_cast<std::size_t>(row) * r.groupsPerRow + g] = mn;
            r.maxs[static_cast<std::size_t>(row) * r.groupsPerRow + g] = mx;
            r.absmax = std::max({r.absmax, -mn, mx});
        }
    }
    return r;
}

GptqResult gptqRound(const std::string& tensorName, const float* weight, std::int64_t rows, std::int64_t cols,
                     DType dtype, const std::vector<double>& hessian, const WeightScheme& scheme,
                     const GroupRanges& ranges, const GptqOptions& options, unsigned threads)
{
    if (!gptqSupports(scheme)) {
        throw QuantError(QuantErrorKind::InvalidScheme,
                         std::string(scheme.name) + " has no GPTQ here (integer schemes only)", tensorName);
    }
    const std::int64_t group = scheme.groupSize < 0 ? cols : scheme.groupSize;
    if (rows <= 0 || cols <= 0 || cols % group != 0 ||
        hessian.size() != static_cast<std::size_t>(cols * cols) ||
        ranges.groupsPerRow != static_cast<std::size_t>(cols / group) ||
        ranges.mins.size() != static_cast<std::size_t>(rows) * ranges.groupsPerRow ||
        ranges.maxs.size() != ranges.mins.size()) {
        throw QuantError(QuantErrorKind::BadShape,
                         "GPTQ inputs disagree: weight [" + std::to_string(rows) + ", " +
                             std::to_string(cols) + "], " + std::to_string(hessian.size()) +
                             " Hessian entries, " + std::to_string(ranges.groupsPerRow) + " groups per row",
                         tensorName);
    }
    for (std::int64_t i = 0; i < rows * cols; ++i) {
        if (!std::isfinite(weight[i])) {
            throw QuantError(QuantErrorKind::NonFinite, "non-finite weight", tensorName,
                             static_cast<std::uint64_t>(i));
        }
    }
    // A NaN slips through Cholesky's pivot test (NaN <= 0 is false) and would poison every code.
    if (!std::all_of(hessian.begin(), hessian.end(), [](double v) { return std::isfinite(v); })) {
        throw QuantError(QuantErrorKind::NonFinite, "non-finite Hessian entry", tensorName);
    }

    const auto params = groupParams(scheme, dtype, group, ranges);

    // LC's preparation of H (rounding.md §2.3 items 5-6): dead columns get H[d,d] = 1 (and W[:,d] = 0
    // below), then λ = dampening · mean(diag H) on the diagonal. The output errors use the H passed in.
    const ConstMapD h(hessian.data(), cols, cols);
    MatrixD damped = h;
    std::vector<bool> dead(static_cast<std::size_t>(cols), false);
    for (std::int64_t i = 0; i < cols; ++i) {
        if (damped(i, i) == 0) {
            damped(i, i) = 1;
            dead[static_cast<std::size_t>(i)] = true;
        }
    }
    damped.diagonal().array() += options.dampening * damped.diagonal().mean();

    GptqResult result;
    MatrixF u = inverseFactor(std::move(damped), result.fallbackReason);
    if (u.size() == 0) {
        // LC warns "Failed to invert hessian" and uses Hinv = I: every column rounds on its own.
        result.fellBack = true;
        result.fallbackReason += "; RTN codes with GPTQ's fp32 quotient under the same ranges";
        u = MatrixF::Identity(cols, cols);
    }

    result.weight.resize(static_cast<std::size_t>(rows * cols));
    // Fixed row tasks, each summing its own energies, added up in task order: the result is the same
    // for every thread count.
    const auto tasks = static_cast<std::size_t>((rows + kRowsPerTask - 1) / kRowsPerTask);
    std::vector<std::array<double, 3>> energies(tasks);
    const std::int64_t blockSize = std::max<std::int64_t>(1, options.blockSize);
    parallelFor(tasks, 1, resolveThreads(static_cast<int>(threads)), [&](std::size_t begin, std::size_t end) {
        for (std::size_t task = begin; task < end; ++task) {
            const std::int64_t r0 = static_cast<std::int64_t>(task) * kRowsPerTask;
            const std::int64_t n = std::min(kRowsPerTask, rows - r0);
            solveRows(weight, r0, n, cols, u, params, dead, blockSize, result.weight.data());
            energies[task] = outputEnergies(weight, result.weight.data(), r0, n, cols, params, h);
        }
    });
    std::array<double, 3> total{};
    for (const auto& part : energies) {
        for (std::size_t k = 0; k < 3; ++k) {
            total[k] += part[k];
        }
    }
    result.outputError = total[0] > 0 ? total[1] / total[0] : 0;
    result.rtnOutputError = total[0] > 0 ? total[2] / total[0] : 0;
    return result;
}

double rtnOutputError(const float* weight, std::int64_t rows, std::int64_t cols, DType dtype,
                      const std::vector<double>& hessian, const WeightScheme& scheme,
                      const GroupRanges& ranges)
{
    const std::int64_t group = scheme.groupSize < 0 ? cols : scheme.groupSize;
    const auto params = groupParams(scheme, dtype, group, ranges);
    const ConstMapD h(hessian.data(), cols, cols);
    std::array<double, 3> total{};
    for (std::int64_t r0 = 0; r0 < rows; r0 += kRowsPerTask) {
        // The weight as its own "solved" weight: only the energy and the RTN term are of interest.
        const auto part =
            outputEnergies(weight, weight, r0, std::min(kRowsPerTask, rows - r0), cols, params, h);
        total[0] += part[0];
        total[2] += part[2];
    }
    return total[0] > 0 ? total[2] / total[0] : 0;
}

} // namespace spark
