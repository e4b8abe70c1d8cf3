// CUDA kernels of RTN quantization, packing and error statistics (format-spec §2.2, §2.3). Each one
// mirrors a CPU kernel (core/quant/rtnkernels.cpp, statskernels.cpp) element for element through the
// device copies of rtnscalar.h in cudarith.cuh.
#include "core/quant/cuda/cudakernels.cuh"
#include "core/quant/cuda/cudarith.cuh"

#include <algorithm>

namespace spark::cuda::kernels {

namespace {

using dev::Raw;

constexpr int kThreads = 256;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// Raw bits of the @p E consecutive elements of word @p f (little-endian), with vector loads:
/// E * elementBytes is 8, 16 or 32 bytes, and every chunk buffer starts 256-byte aligned.
template <ElementType T, int E>
__device__ __forceinline__ void loadWordElements(const void* base, std::size_t f, std::uint32_t (&raw)[E])
{
    constexpr int bytes = E * dev::kElementBytes<T>;
    std::uint32_t w[bytes / 4];
    const char* p = static_cast<const char*>(base) + f * bytes;
    if constexpr (bytes == 8) {
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
        w[0] = v.x;
        w[1] = v.y;
    } else {
#pragma unroll
        for (int i = 0; i < bytes / 16; ++i) {
            const uint4 v = __ldg(reinterpret_cast<const uint4*>(p) + i);
            w[4 * i] = v.x;
            w[4 * i + 1] = v.y;
            w[4 * i + 2] = v.z;
            w[4 * i + 3] = v.w;
        }
    }
#pragma unroll
    for (int t = 0; t < E; ++t) {
        if constexpr (T == ElementType::F32) {
            raw[t] = w[t];
        } else {
            raw[t] = (w[t / 2] >> (16 * (t & 1))) & 0xFFFFu;
        }
    }
}

/// Group strategy (groups of 32/64/128 columns): one thread per packed word, the @p tpg threads of a
/// group are neighbouring lanes of one warp and share the absmax through shuffles. Words of a chunk
/// are contiguous (cols is a multiple of the group), so word f covers flat elements [f*E, f*E + E).
template <ElementType T, int BITS>
__global__ void __launch_bounds__(kThreads)
    groupKernel(const void* __restrict__ weights, std::size_t totalWords, int tpg, float divisor,
                unsigned mode, void* __restrict__ scales, std::int32_t* __restrict__ packed,
                std::uint8_t* __restrict__ epsFlags, unsigned long long* __restrict__ firstBad)
{
    constexpr int E = 32 / BITS;
    constexpr float qMin = static_cast<float>(-(1 << (BITS - 1)));
    constexpr float qMax = static_cast<float>((1 << (BITS - 1)) - 1);
    constexpr int offset = 1 << (BITS - 1);
    using R = typename Raw<T>::type;
    const std::uint32_t limit = dev::nonFiniteRaw<T>();
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    // The loop bound depends on the block only, so every lane of a warp reaches the shuffles.
    for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x; base < totalWords;
         base += stride) {
        const std::size_t f = base + threadIdx.x;
        const bool valid = f < totalWords;
        std::uint32_t raw[E] = {};
        if (valid) {
            loadWordElements<T, E>(weights, f, raw);
        }
        std::uint32_t m = 0;
#pragma unroll
        for (int t = 0; t < E; ++t) {
            m = max(m, dev::rawAbs<T>(raw[t]));
        }
        for (int off = 1; off < tpg; off <<= 1) {
            m = max(m, __shfl_xor_sync(kFullMask, m, off));
        }
        if (!valid) {
            continue;
        }
        if (m >= limit) {
            // The first bad element of this word; atomicMin over all words gives the block's first.
#pragma unroll
            for (int t = 0; t < E; ++t) {
                if (dev::rawAbs<T>(raw[t]) >= limit) {
                    atomicMin(firstBad, static_cast<unsigned long long>(f * E + t));
                    break;
                }
            }
            continue;
        }
        const std::size_t g = f / static_cast<std::size_t>(tpg);
        float s;
        if (mode & kReadScales) {
            s = dev::rawToFloat<T>(static_cast<const R*>(scales)[g]);
        } else {
            const float rs = dev::rawScale<T>(dev::rawToFloat<T>(m), divisor);
            s = rs == 0.0f ? dev::scaleEps<T>() : rs;
            if (f % static_cast<std::size_t>(tpg) == 0) {
                if (mode & kWriteScales) {
                    static_cast<R*>(scales)[g] = dev::scaleBits<T>(s);
                }
                if (epsFlags) {
                    epsFlags[g] = rs == 0.0f ? 1 : 0;
                }
            }
        }
        if (mode & kPack) {
            std::uint32_t word = 0;
#pragma unroll
            for (int t = 0; t < E; ++t) {
                const float q = dev::quantizeToFloat<T>(dev::rawToFloat<T>(raw[t]), s, qMin, qMax);
                const auto u = static_cast<std::uint32_t>(__float2int_rn(q) + offset);
                word |= u << (BITS * t);
            }
            packed[f] = static_cast<std::int32_t>(word);
        }
    }
}

/// Deterministic block reduction over kThreads values (fixed tree: the same order on every run).
template <typename T, typename Combine> __device__ T blockReduce(T v, T* red, Combine combine)
{
    red[threadIdx.x] = v;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if (static_cast<int>(threadIdx.x) < s) {
            red[threadIdx.x] = combine(red[threadIdx.x], red[threadIdx.x + s]);
        }
        __syncthreads();
    }
    const T total = red[0];
    __syncthreads();
    return total;
}

// Functors rather than lambdas: device lambdas would need nvcc's --extended-lambda.
struct AddRoundNearest
{
    __device__ double operator()(double a, double b) const { return __dadd_rn(a, b); }
};
struct MaxU32
{
    __device__ std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const { return max(a, b); }
};
struct AddU32
{
    __device__ std::uint32_t operator()(std::uint32_t a, std::uint32_t b) const { return a + b; }
};

__device__ double blockSum(double v, double* red)
{
    return blockReduce(v, red, AddRoundNearest{});
}

__device__ std::uint32_t blockMaxU(std::uint32_t v, std::uint32_t* red)
{
    return blockReduce(v, red, MaxU32{});
}

__device__ std::uint32_t blockSumU(std::uint32_t v, std::uint32_t* red)
{
    return blockReduce(v, red, AddU32{});
}

/// Per-channel scales (any column count): one block per row, absmax by a block reduction.
template <ElementType T>
__global__ void __launch_bounds__(kThreads)
    rowScaleKernel(const void* __restrict__ weights, std::size_t rows, std::size_t cols, float divisor,
                   void* __restrict__ scales, std::uint8_t* __restrict__ epsFlags,
                   unsigned long long* __restrict__ firstBad)
{
    using R = typename Raw<T>::type;
    __shared__ std::uint32_t red[kThreads];
    const std::uint32_t limit = dev::nonFiniteRaw<T>();
    for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const R* row = static_cast<const R*>(weights) + r * cols;
        std::uint32_t m = 0;
        for (std::size_t k = threadIdx.x; k < cols; k += kThreads) {
            m = max(m, dev::rawAbs<T>(row[k]));
        }
        m = blockMaxU(m, red);
        if (m >= limit) {
            for (std::size_t k = threadIdx.x; k < cols; k += kThreads) {
                if (dev::rawAbs<T>(row[k]) >= limit) {
                    atomicMin(firstBad, static_cast<unsigned long long>(r * cols + k));
                    break;
                }
            }
        } else if (threadIdx.x == 0) {
            const float rs = dev::rawScale<T>(dev::rawToFloat<T>(m), divisor);
            const float s = rs == 0.0f ? dev::scaleEps<T>() : rs;
            static_cast<R*>(scales)[r] = dev::scaleBits<T>(s);
            if (epsFlags) {
                epsFlags[r] = rs == 0.0f ? 1 : 0;
            }
        }
    }
}

/// Per-channel packing (any column count): one thread per word; a partial last word is padded with 0
/// in the unsigned domain (packUnsignedRow). Also reports non-finite weights, as the CPU does.
template <ElementType T, int BITS>
__global__ void __launch_bounds__(kThreads)
    rowPackKernel(const void* __restrict__ weights, std::size_t rows, std::size_t cols, std::size_t words,
                  const void* __restrict__ scales, std::int32_t* __restrict__ packed,
                  unsigned long long* __restrict__ firstBad)
{
    constexpr int E = 32 / BITS;
    constexpr float qMin = static_cast<float>(-(1 << (BITS - 1)));
    constexpr float qMax = static_cast<float>((1 << (BITS - 1)) - 1);
    constexpr int offset = 1 << (BITS - 1);
    using R = typename Raw<T>::type;
    const std::uint32_t limit = dev::nonFiniteRaw<T>();
    const std::size_t total = rows * words;
    for (std::size_t f = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; f < total;
         f += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t r = f / words;
        const std::size_t j = f % words;
        const R* row = static_cast<const R*>(weights) + r * cols;
        const float s = dev::rawToFloat<T>(static_cast<const R*>(scales)[r]);
        std::uint32_t word = 0;
        bool bad = false;
        for (int t = 0; t < E; ++t) {
            const std::size_t k = j * E + static_cast<std::size_t>(t);
            if (k >= cols) {
                break;
            }
            const std::uint32_t bits = row[k];
            if (dev::rawAbs<T>(bits) >= limit) {
                atomicMin(firstBad, static_cast<unsigned long long>(r * cols + k));
                bad = true;
                break;
            }
            const float q = dev::quantizeToFloat<T>(dev::rawToFloat<T>(bits), s, qMin, qMax);
            word |= static_cast<std::uint32_t>(__float2int_rn(q) + offset) << (BITS * t);
        }
        if (!bad) {
            packed[f] = static_cast<std::int32_t>(word);
        }
    }
}

/// Error statistics: one block per row. Each element goes through the same steps as the SIMD body of
/// statskernels.cpp; the float64 row sums are formed per thread (columns tid, tid + 256, ...) and
/// then by a fixed tree, so they are deterministic. They differ from the CPU's lane sums only in the
/// association of additions of non-negative terms (relative difference below (cols/256 + 8) * 2^-53
/// per row; the host reduces rows in row order exactly like ErrorStatsAccumulator).
template <ElementType T>
__global__ void __launch_bounds__(kThreads)
    statsKernel(const void* __restrict__ weights, std::size_t rows, std::size_t cols, std::size_t width,
                std::size_t groups, int bits, StatsLayout layout, const void* __restrict__ scales,
                const std::uint8_t* __restrict__ epsFlags, RowPartials* __restrict__ perRow,
                std::uint32_t* __restrict__ hist)
{
    using R = typename Raw<T>::type;
    extern __shared__ std::uint32_t shared[];
    __shared__ double redD[kThreads];
    __shared__ std::uint32_t redU[kThreads];
    const int qN = layout.qBins;
    const int wN = layout.weightBins + 1;
    const int eN = layout.errorBins + 1;
    const int aN = layout.absErrBins + 1;
    const int histWords = qN + wN + eN + aN;
    std::uint32_t* hq = shared;
    std::uint32_t* hw = hq + qN;
    std::uint32_t* he = hw + wN;
    std::uint32_t* ha = he + eN;
    for (int i = threadIdx.x; i < histWords; i += kThreads) {
        shared[i] = 0;
    }
    __syncthreads();
    const float qMin = static_cast<float>(-(1 << (bits - 1)));
    const float qMax = static_cast<float>((1 << (bits - 1)) - 1);
    const float inf = __int_as_float(0x7F800000);
    const float wMaxBin = static_cast<float>(layout.weightBins - 1);
    const float eMaxBin = static_cast<float>(layout.errorBins - 1);

    for (std::size_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const R* row = static_cast<const R*>(weights) + r * cols;
        const R* rowScales = static_cast<const R*>(scales) + r * groups;
        double sumW2 = 0, sumAbsW = 0, sumErr2 = 0, sumAbsErr = 0, sumExact = 0;
        float maxErr = 0;
        std::uint32_t nonFinite = 0;
        for (std::size_t k = threadIdx.x; k < cols; k += kThreads) {
            const float s = dev::rawToFloat<T>(rowScales[k / width]);
            const float invS = __fdiv_rn(1.0f, s);
            const float w = dev::rawToFloat<T>(row[k]);
            const float quotient = __fdiv_rn(w, s);
            const float q = rintf(fminf(fmaxf(dev::roundToDType<T>(quotient), qMin), qMax));
            const float d = dev::dequantize<T>(q, s);
            const bool finite = fabsf(d) < inf;
            const float e = finite ? __fsub_rn(w, d) : 0.0f;
            const float ae = fabsf(e);
            maxErr = fmaxf(maxErr, ae);
            nonFinite += finite ? 0u : 1u;
            // The histogram sample of kernels::histogramSampled().
            if ((((k >> layout.sampleChunkShift) + layout.firstRow + r) & (layout.sampleStride - 1)) == 0) {
                atomicAdd(&hq[__float2int_rz(__fsub_rn(q, qMin))], 1u);
                const float wt = __fmul_rn(__fsub_rn(quotient, layout.wLo), layout.wInv);
                atomicAdd(&hw[__float2int_rz(fminf(fmaxf(wt, 0.0f), wMaxBin))], 1u);
                const float et = __fmul_rn(__fsub_rn(__fmul_rn(e, invS), layout.errorLo), layout.eInv);
                const int eBin = finite ? __float2int_rz(fminf(fmaxf(et, 0.0f), eMaxBin)) : layout.errorBins;
                atomicAdd(&he[eBin], 1u);
                const int aBin =
                    finite ? static_cast<int>(__float_as_uint(ae) >> layout.absErrShift) : layout.absErrBins;
                atomicAdd(&ha[aBin], 1u);
            }
            // w and e are exact floats, so their squares are exact in float64; only additions round.
            const double wd = w;
            const double ed = e;
            const double ex = __dsub_rn(wd, __dmul_rn(static_cast<double>(q), static_cast<double>(s)));
            sumW2 = __dadd_rn(sumW2, __dmul_rn(wd, wd));
            sumAbsW = __dadd_rn(sumAbsW, fabs(wd));
            sumErr2 = __dadd_rn(sumErr2, __dmul_rn(ed, ed));
            sumAbsErr = __dadd_rn(sumAbsErr, fabs(ed));
            sumExact = __dadd_rn(sumExact, __dmul_rn(ex, ex));
        }
        std::uint32_t eps = 0;
        for (std::size_t g = threadIdx.x; g < groups; g += kThreads) {
            eps += epsFlags[r * groups + g];
        }
        RowPartials p;
        p.sumW2 = blockSum(sumW2, redD);
        p.sumAbsW = blockSum(sumAbsW, redD);
        p.sumErr2 = blockSum(sumErr2, redD);
        p.sumAbsErr = blockSum(sumAbsErr, redD);
        p.sumErr2Exact = blockSum(sumExact, redD);
        // |e| >= 0: the integer order of the bits is the float order.
        p.maxAbsErr = __uint_as_float(blockMaxU(__float_as_uint(maxErr), redU));
        p.dequantNonFinite = blockSumU(nonFinite, redU);
        p.epsScales = blockSumU(eps, redU);
        if (threadIdx.x == 0) {
            perRow[r] = p;
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < histWords; i += kThreads) {
        if (shared[i] != 0) {
            atomicAdd(&hist[i], shared[i]);
        }
    }
}

unsigned gridFor(std::size_t work, int smCount, int perSm)
{
    const std::size_t blocks = (work + kThreads - 1) / kThreads;
    return static_cast<unsigned>(
        std::max<std::size_t>(1, std::min<std::size_t>(blocks, std::size_t(smCount) * perSm)));
}

unsigned rowGrid(std::size_t rows, int smCount)
{
    return static_cast<unsigned>(
        std::max<std::size_t>(1, std::min<std::size_t>(rows, std::size_t(smCount) * 8)));
}

/// Threads per group of the warp-shuffle kernel, or 0 when the group does not fit in one warp.
int threadsPerGroup(const Block& shape)
{
    const std::size_t e = static_cast<std::size_t>(32 / shape.bits);
    if (shape.groupWidth % e != 0 || shape.cols % shape.groupWidth != 0) {
        return 0;
    }
    const std::size_t tpg = shape.groupWidth / e;
    return tpg <= 32 && (tpg & (tpg - 1)) == 0 ? static_cast<int>(tpg) : 0;
}

template <ElementType T, int BITS>
void quantizeTyped(const Block& shape, std::size_t rows, const void* weights, void* scales,
                   std::int32_t* packed, std::uint8_t* epsFlags, unsigned mode, unsigned long long* firstBad,
                   int smCount, cudaStream_t stream)
{
    if (rows == 0) {
        return;
    }
    const int tpg = threadsPerGroup(shape);
    if (tpg > 0) {
        const std::size_t totalWords = rows * shape.words;
        groupKernel<T, BITS><<<gridFor(totalWords, smCount, 16), kThreads, 0, stream>>>(
            weights, totalWords, tpg, shape.divisor, mode, scales, packed, epsFlags, firstBad);
        return;
    }
    // Per channel: a block per row for the absmax, then one thread per word.
    if (!(mode & kReadScales)) {
        rowScaleKernel<T><<<rowGrid(rows, smCount), kThreads, 0, stream>>>(
            weights, rows, shape.cols, shape.divisor, scales, epsFlags, firstBad);
    }
    if (mode & kPack) {
        rowPackKernel<T, BITS><<<gridFor(rows * shape.words, smCount, 16), kThreads, 0, stream>>>(
            weights, rows, shape.cols, shape.words, scales, packed, firstBad);
    }
}

template <ElementType T>
void quantizeBits(const Block& shape, std::size_t rows, const void* weights, void* scales,
                  std::int32_t* packed, std::uint8_t* epsFlags, unsigned mode, unsigned long long* firstBad,
                  int smCount, cudaStream_t stream)
{
    if (shape.bits == 8) {
        quantizeTyped<T, 8>(shape, rows, weights, scales, packed, epsFlags, mode, firstBad, smCount, stream);
    } else {
        quantizeTyped<T, 4>(shape, rows, weights, scales, packed, epsFlags, mode, firstBad, smCount, stream);
    }
}

} // namespace

void launchQuantize(const Block& shape, std::size_t rows, const void* weights, void* scales,
                    std::int32_t* packed, std::uint8_t* epsFlags, unsigned mode, unsigned long long* firstBad,
                    int smCount, cudaStream_t stream)
{
    switch (shape.type) {
    case ElementType::F32:
        quantizeBits<ElementType::F32>(shape, rows, weights, scales, packed, epsFlags, mode, firstBad,
                                       smCount, stream);
        break;
    case ElementType::F16:
        quantizeBits<ElementType::F16>(shape, rows, weights, scales, packed, epsFlags, mode, firstBad,
                                       smCount, stream);
        break;
    default:
        quantizeBits<ElementType::BF16>(shape, rows, weights, scales, packed, epsFlags, mode, firstBad,
                                        smCount, stream);
        break;
    }
}

cudaError_t checkKernelImage()
{
    cudaFuncAttributes attributes{};
    return cudaFuncGetAttributes(&attributes, groupKernel<ElementType::BF16, 4>);
}

std::size_t statsHistogramWords(const StatsLayout& layout)
{
    return static_cast<std::size_t>(layout.qBins + layout.weightBins + 1 + layout.errorBins + 1 +
                                    layout.absErrBins + 1);
}

void launchStats(const Block& shape, const StatsLayout& layout, std::size_t rows, const void* weights,
                 const void* scales, const std::uint8_t* epsFlags, RowPartials* perRow, std::uint32_t* hist,
                 int smCount, cudaStream_t stream)
{
    if (rows == 0) {
        return;
    }
    const std::size_t sharedBytes = statsHistogramWords(layout) * sizeof(std::uint32_t);
    const unsigned grid = rowGrid(rows, smCount);
    switch (shape.type) {
    case ElementType::F32:
        statsKernel<ElementType::F32><<<grid, kThreads, sharedBytes, stream>>>(
            weights, rows, shape.cols, shape.groupWidth, shape.groups, shape.bits, layout, scales, epsFlags,
            perRow, hist);
        break;
    case ElementType::F16:
        statsKernel<ElementType::F16><<<grid, kThreads, sharedBytes, stream>>>(
            weights, rows, shape.cols, shape.groupWidth, shape.groups, shape.bits, layout, scales, epsFlags,
            perRow, hist);
        break;
    default:
        statsKernel<ElementType::BF16><<<grid, kThreads, sharedBytes, stream>>>(
            weights, rows, shape.cols, shape.groupWidth, shape.groups, shape.bits, layout, scales, epsFlags,
            perRow, hist);
        break;
    }
}

} // namespace spark::cuda::kernels
