#include "core/quant/roundingsearch.h"

#include "core/quant/candidatequant.h"
#include "core/quant/powtable.h"
#include "core/quant/quanterror.h"
#include "core/quant/roundingkernels.h"
#include "core/util/parallel.h"

#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace spark {
namespace {

/// The largest finite value of the weight dtype: LC's initial best error (torch.finfo(dtype).max).
float dtypeMax(DType dt)
{
    switch (dt) {
    case DType::F32:
        return std::numeric_limits<float>::max();
    case DType::F16:
        return 65504.0f;
    default:
        return 0x1.FEp127f;
    }
}

/// One element's term of the DTypeLp error: pow(|rnd(deq - w)|, n) in the dtype.
struct LpTerm
{
    DType dt;
    const PowTable* table = nullptr; // 16-bit dtypes
    float normF32 = 2.4f;

    float operator()(float deq, float w) const
    {
        const float d = std::fabs(rtn::roundToDType(dt, deq - w));
        if (dt == DType::F32) {
            return static_cast<float>(std::pow(static_cast<double>(d), static_cast<double>(normF32)));
        }
        const auto bits = dt == DType::F16 ? floatToF16(d) : floatToBf16(d);
        return table->term(bits);
    }
};

} // namespace

struct RangeSearch::Impl
{
    const RoundingMethod& method;
    candidate::Arith arith;
    std::uint64_t rows = 0;
    std::size_t cols = 0;
    std::size_t width = 0;  // columns per group
    std::size_t groups = 0; // per row
    bool independentEnds = false;
    LpTerm lp;
    kernels::PowLookup pow;                     // lp's table for the kernel
    std::vector<float> mn, mx;                  // per group: min(w, 0), max(w, 0)
    std::vector<std::uint64_t> improved;        // per group: bit i when step i lowered the group's best error
    std::vector<std::uint8_t> minStep, maxStep; // per group, methods without patience
    std::vector<float> factors;                 // per step: the method's shrink factor
    bool useKernel = false;                     // the SIMD kernel scores this dtype and error rule
    const std::vector<double>* hessian = nullptr; // HessianBlock: [cols, cols]

    Impl(const RoundingMethod& m, const WeightScheme& scheme, std::uint64_t r, std::uint64_t c, DType dt,
         const std::vector<double>* h)
        : method(m), arith(candidate::arithFor(scheme, dt)), rows(r),
          cols(static_cast<std::size_t>(c)), lp{dt, nullptr, static_cast<float>(m.norm)}, hessian(h)
    {
        width = scheme.groupSize > 0 ? static_cast<std::size_t>(scheme.groupSize) : cols;
        groups = cols / width;
        independentEnds = m.independentEnds && scheme.family == SchemeFamily::IntAsymmetric;
        if (dt != DType::F32) {
            lp.table = &powTable(dt, m.norm);
            pow = lp.table->lookup();
        }
        const auto n = static_cast<std::size_t>(rows) * groups;
        mn.resize(n);
        mx.resize(n);
        improved.resize(n);
        minStep.resize(n);
        maxStep.resize(n);
        for (int i = 0; i < m.steps; ++i) {
            factors.push_back(m.shrink(i));
        }
        useKernel = m.error != RoundingError::HessianBlock && kernels::candidateKernelSupports(m.error, dt);
    }

    /// eᵀ H_gg e for the group whose first column is @p first, e = Q(w) - w: the group's own term of
    /// tr((Q - W) H (Q - W)ᵀ), summed in f64.
    double hessianError(const candidate::Params& p, const float* w, std::size_t first) const
    {
        thread_local std::vector<double> d;
        d.resize(width);
        for (std::size_t k = 0; k < width; ++k) {
            d[k] = static_cast<double>(candidate::dequantize(arith, p, w[k])) - static_cast<double>(w[k]);
        }
        const double* h = hessian->data() + first * cols + first;
        double sum = 0;
        for (std::size_t a = 0; a < width; ++a, h += cols) {
            double row = 0;
            for (std::size_t b = 0; b < width; ++b) {
                row += h[b] * d[b];
            }
            sum += d[a] * row;
        }
        return sum;
    }

    /// The scalar error of one candidate in the method's rule: the reference of the SIMD kernel, and the
    /// path of DTypeLp on F32 weights (a pow per element, no table). @p first: the group's first column.
    double scalarError(const candidate::Params& p, const float* w, std::size_t first) const
    {
        if (method.error == RoundingError::HessianBlock) {
            return hessianError(p, w, first);
        }
        double sum = 0;
        if (method.error == RoundingError::DTypeLp) {
            for (std::size_t k = 0; k < width; ++k) {
                sum += lp(candidate::dequantize(arith, p, w[k]), w[k]);
            }
            // torch sums in f32 and rounds once to the dtype.
            return rtn::roundToDType(arith.dtype, static_cast<float>(sum));
        }
        for (std::size_t k = 0; k < width; ++k) {
            const float d = candidate::dequantize(arith, p, w[k]) - w[k];
            sum += static_cast<double>(d * d);
        }
        return sum;
    }

    /// The errors of the @p count candidates @p params on the group @p w (first column @p first), into
    /// @p out.
    void errors(const candidate::Params* params, std::size_t count, const float* w, std::size_t first,
                double* out) const
    {
        if (!useKernel) {
            for (std::size_t i = 0; i < count; ++i) {
                out[i] = scalarError(params[i], w, first);
            }
            return;
        }
        kernels::candidateErrorSums(arith, method.error, pow, w, width, params, count, out);
        if (method.error == RoundingError::DTypeLp) {
            // The kernel's float sum s is within tol of the exact one, so the scalar loop's rounded sum lies
            // between the roundings of s·(1 - tol) and s·(1 + tol) (rounding is monotone): equal bounds are
            // that value; else (near a midpoint, rarely) the scalar loop decides.
            const double tol = kernels::lpSumTolerance(width);
            const DType dt = arith.dtype;
            for (std::size_t i = 0; i < count; ++i) {
                const float lo = rtn::roundToDType(dt, static_cast<float>(out[i] * (1.0 - tol)));
                const float hi = rtn::roundToDType(dt, static_cast<float>(out[i] * (1.0 + tol)));
                out[i] = lo == hi ? lo : scalarError(params[i], w, first);
            }
        }
    }

    float shrunk(float m, int step) const
    {
        return rtn::roundToDType(arith.dtype, m * factors[static_cast<std::size_t>(step)]);
    }

    candidate::Params params(float lo, float hi, int lowStep, int highStep) const
    {
        return candidate::paramsFor(arith, shrunk(lo, lowStep), shrunk(hi, highStep));
    }

    void searchGroup(std::size_t index, const float* w)
    {
        const std::size_t first = index % groups * width;
        float lo = 0.0f, hi = 0.0f; // calculate_qparams clamps min <= 0 <= max; shrinking commutes with it
        kernels::groupRange(w, width, &lo, &hi);
        mn[index] = lo;
        mx[index] = hi;
        const auto steps = static_cast<std::size_t>(method.steps);
        std::array<candidate::Params, kernels::kMaxCandidates> cand;
        std::array<double, kernels::kMaxCandidates> err;
        // All candidates are scored first, then scanned in step order: the same winners as scoring and
        // comparing one step at a time.
        for (int i = 0; i < method.steps; ++i) {
            cand[static_cast<std::size_t>(i)] = params(lo, hi, i, i);
        }
        errors(cand.data(), steps, w, first, err.data());
        double best = method.error == RoundingError::DTypeLp ? dtypeMax(arith.dtype)
                                                             : std::numeric_limits<double>::infinity();
        std::uint64_t mask = 0;
        int bestStep = 0;
        for (int i = 0; i < method.steps; ++i) {
            const double e = err[static_cast<std::size_t>(i)];
            if (e < best) { // strict: ties keep the earlier, larger range
                best = e;
                bestStep = i;
                mask |= std::uint64_t{1} << i;
            }
        }
        improved[index] = mask;
        int lowStep = bestStep, highStep = bestStep;
        if (independentEnds) {
            for (int i = 0; i < method.steps; ++i) {
                cand[static_cast<std::size_t>(i)] = params(lo, hi, i, highStep);
            }
            errors(cand.data(), steps, w, first, err.data());
            for (int i = 0; i < method.steps; ++i) {
                const double e = err[static_cast<std::size_t>(i)];
                if (e < best) {
                    best = e;
                    lowStep = i;
                }
            }
            for (int i = 0; i < method.steps; ++i) {
                cand[static_cast<std::size_t>(i)] = params(lo, hi, lowStep, i);
            }
            errors(cand.data(), steps, w, first, err.data());
            for (int i = 0; i < method.steps; ++i) {
                const double e = err[static_cast<std::size_t>(i)];
                if (e < best) {
                    best = e;
                    highStep = i;
                }
            }
        }
        minStep[index] = static_cast<std::uint8_t>(lowStep);
        maxStep[index] = static_cast<std::uint8_t>(highStep);
    }
};

RangeSearch::RangeSearch(const RoundingMethod& method, const WeightScheme& scheme, std::uint64_t rows,
                         std::uint64_t cols, DType dtype, const std::vector<double>* hessian)
{
    if (!method.searches() || !scheme.quantizes() || method.steps > 64) {
        throw QuantError(QuantErrorKind::InvalidScheme, "rounding '" + std::string(method.name) +
                                                            "' has no range search for " +
                                                            std::string(scheme.name));
    }
    if (!isQuantizableFloat(dtype)) {
        throw QuantError(QuantErrorKind::UnsupportedDType, "cannot quantize dtype " +
                                                               std::string(dtypeName(dtype)) +
                                                               " (BF16, F16 or F32 needed)");
    }
    if (cols == 0 || (scheme.groupSize > 0 && cols % static_cast<std::uint64_t>(scheme.groupSize) != 0)) {
        throw QuantError(QuantErrorKind::BadShape,
                         "tensor column shape must be divisible by the group size " +
                             std::to_string(scheme.groupSize) + " but got " + std::to_string(cols));
    }
    if (method.needsHessian() && (!hessian || hessian->size() != cols * cols)) {
        throw QuantError(QuantErrorKind::InvalidScheme,
                         "rounding '" + std::string(method.name) +
                             "' chooses its scales by the input Hessians of a capture, which only quantize "
                             "(with --hidden-states) and the Export dialog compute; measure such an export "
                             "with acceptance --quantized");
    }
    m_impl = std::make_unique<Impl>(method, scheme, rows, cols, dtype, hessian);
}

RangeSearch::~RangeSearch() = default;

void RangeSearch::addRows(const WeightRows& rows, unsigned threads)
{
    auto& s = *m_impl;
    parallelFor(rows.rowCount, 1, resolveThreads(static_cast<int>(threads)),
                [&](std::size_t begin, std::size_t end) {
                    std::vector<float> w(rows.cols);
                    for (std::size_t r = begin; r < end; ++r) {
                        codec::loadRow(rows, r, w.data());
                        const std::size_t base = (rows.firstRow + r) * s.groups;
                        for (std::size_t g = 0; g < s.groups; ++g) {
                            s.searchGroup(base + g, w.data() + g * s.width);
                        }
                    }
                });
}

std::shared_ptr<const GroupRanges> RangeSearch::finish()
{
    auto& s = *m_impl;
    const auto& method = s.method;
    if (method.patience > 0) {
        // LC's early stop is global: the loop ends after `patience` steps in which no group improved.
        std::uint64_t any = 0;
        for (const auto m : s.improved) {
            any |= m;
        }
        int stop = method.steps - 1;
        for (int i = 0, idle = 0; i < method.steps; ++i) {
            idle = (any >> i & 1u) ? 0 : idle + 1;
            if (idle >= method.patience) {
                stop = i;
                break;
            }
        }
        const std::uint64_t evaluated = stop >= 63 ? ~std::uint64_t{0} : (std::uint64_t{2} << stop) - 1;
        for (std::size_t i = 0; i < s.improved.size(); ++i) {
            const auto m = s.improved[i] & evaluated;
            // No improvement at all keeps LC's initial copy of the unshrunk range, i.e. step 0.
            const int step = m == 0 ? 0 : 63 - std::countl_zero(m);
            s.minStep[i] = s.maxStep[i] = static_cast<std::uint8_t>(step);
        }
    }
    auto out = std::make_shared<GroupRanges>();
    out->groupsPerRow = s.groups;
    out->mins.resize(s.mn.size());
    out->maxs.resize(s.mx.size());
    for (std::size_t i = 0; i < s.mn.size(); ++i) {
        out->mins[i] = s.shrunk(s.mn[i], s.minStep[i]);
        out->maxs[i] = s.shrunk(s.mx[i], s.maxStep[i]);
        out->absmax = std::max(out->absmax, std::max(-out->mins[i], out->maxs[i]));
    }
    return out;
}

std::shared_ptr<const GroupRanges> searchRanges(const RoundingMethod& method, const WeightScheme& scheme,
                                                const WeightRows& rows, unsigned threads,
                                                const std::vector<double>* hessian)
{
    RangeSearch search(method, scheme, rows.rowCount, rows.cols, rows.dtype, hessian);
    search.addRows(rows, threads);
    return search.finish();
}

} // namespace spark
