#include "core/quant/quantbackend.h"

#include "core/quant/rtnkernels.h"
#include "core/util/parallel.h"

#ifndef SPARK_HAVE_CUDA
#define SPARK_HAVE_CUDA 0
#endif
#if SPARK_HAVE_CUDA
#include "core/quant/cuda/cudaengine.h"
#endif

#include <algorithm>
#include <atomic>
#include <mutex>
#include <stdexcept>

namespace spark {

std::optional<Backend> parseBackend(std::string_view text)
{
    if (text == "auto") {
        return Backend::Auto;
    }
    if (text == "cpu") {
        return Backend::Cpu;
    }
    if (text == "cuda") {
        return Backend::Cuda;
    }
    return std::nullopt;
}

const char* backendName(Backend backend)
{
    switch (backend) {
    case Backend::Cpu:
        return "cpu";
    case Backend::Cuda:
        return "cuda";
    default:
        return "auto";
    }
}

bool cudaCompiledIn() noexcept
{
    return SPARK_HAVE_CUDA != 0;
}

bool cudaAvailable() noexcept
{
#if SPARK_HAVE_CUDA
    return cuda::deviceAvailable();
#else
    return false;
#endif
}

std::string cudaDeviceDescription()
{
#if SPARK_HAVE_CUDA
    return cuda::deviceDescription();
#else
    return "this build has no CUDA support (configure with -DSPARK_CUDA=ON where nvcc is installed)";
#endif
}

QuantizedWeight QuantBackend::quantize(const WeightRows& rows, const QuantScheme& scheme,
                                       unsigned threads) const
{
    rows.validate(scheme);
    QuantizedWeight out;
    out.rows = rows.rowCount;
    out.cols = rows.cols;
    out.scales.resize(rows.rowCount * scheme.groupsPerRow(rows.cols) * scaleBytes(rows.dtype));
    out.packed.resize(rows.rowCount * scheme.packedWordsPerRow(rows.cols));
    quantizeBlock(rows, scheme, out.scales.data(), out.packed.data(), threads);
    return out;
}

namespace {

/// The CPU backend: the functions of rtn.h and the SIMD statistics kernel, rows split over threads.
class CpuBackend final : public QuantBackend
{
  public:
    Backend kind() const override { return Backend::Cpu; }
    std::string description() const override { return std::string("CPU (") + kernels::targetName() + ")"; }

    void computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut,
                       unsigned threads) const override
    {
        spark::computeScales(rows, scheme, scalesOut, threads);
    }

    void quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                      std::int32_t* packedOut, unsigned threads) const override
    {
        spark::quantizeRows(rows, scheme, scales, packedOut, threads);
    }

    void quantizeBlock(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut,
                       std::int32_t* packedOut, unsigned threads) const override
    {
        spark::computeScales(rows, scheme, scalesOut, threads);
        spark::quantizeRows(rows, scheme, scalesOut, packedOut, threads);
    }

    // Row chunks of about 64 Ki elements are handed out dynamically; each worker keeps one set of raw
    // counters for all its chunks and merges it once (integer counts commute, so the merge order does
    // not matter). Per-row sums land in perRow and are reduced in row order by the caller. The first
    // non-finite index is the minimum over chunks.
    void errorStatsRows(const WeightRows& rows, const QuantScheme& scheme, unsigned histogramStride,
                        kernels::RowErrorPartials* perRow, kernels::StatsHistograms& histograms,
                        unsigned threads) const override
    {
        rows.validate(scheme);
        const std::size_t grain =
            std::max<std::size_t>(1, (std::size_t{1} << 16) / std::max<std::size_t>(rows.cols, 1));
        const std::size_t chunks = (rows.rowCount + grain - 1) / grain;
        const auto workers =
            static_cast<unsigned>(std::min<std::size_t>(resolveThreads(static_cast<int>(threads)), chunks));
        std::atomic<std::size_t> nextChunk{0};
        std::atomic<std::size_t> firstBad{kernels::kNoIndex};
        std::mutex mergeMutex;
        const auto merge = [&](const kernels::StatsCounters& counters) {
            std::lock_guard lock(mergeMutex);
            counters.addTo(histograms.q.data(), histograms.weight.data(), histograms.error.data(),
                           histograms.absErr.data());
        };
        parallelFor(workers, 1, workers, [&](std::size_t, std::size_t) {
            kernels::StatsCounters counters(scheme.bits);
            for (;;) {
                const std::size_t chunk = nextChunk.fetch_add(1);
                if (chunk >= chunks) {
                    break;
                }
                const std::size_t begin = chunk * grain;
                WeightRows part = rows;
                part.data = rows.row(begin);
                part.rowCount = std::min(rows.rowCount, begin + grain) - begin;
                part.firstRow = rows.firstRow + begin;
                const std::size_t bad =
                    kernels::errorStatsCount(part, scheme, histogramStride, perRow + begin, counters);
                if (bad != kernels::kNoIndex) {
                    const std::size_t flat = begin * rows.cols + bad;
                    std::size_t seen = firstBad.load();
                    while (flat < seen && !firstBad.compare_exchange_weak(seen, flat)) {
                    }
                    return; // the block throws; its counts are not needed
                }
                // 32-bit counters: merge long before any bin could wrap.
                if (counters.elements >= (std::uint64_t{1} << 31)) {
                    merge(counters);
                    counters.clear();
                }
            }
            if (counters.elements > 0) {
                merge(counters);
            }
        });
        if (firstBad.load() != kernels::kNoIndex) {
            rows.throwNonFinite(firstBad.load());
        }
    }
};

#if SPARK_HAVE_CUDA

cuda::ElementType elementType(DType dtype)
{
    switch (dtype) {
    case DType::F32:
        return cuda::ElementType::F32;
    case DType::F16:
        return cuda::ElementType::F16;
    default:
        return cuda::ElementType::BF16;
    }
}

/// The engine's view of a validated block.
cuda::Block blockOf(const WeightRows& rows, const QuantScheme& scheme)
{
    rows.validate(scheme);
    cuda::Block block;
    block.type = elementType(rows.dtype);
    block.data = rows.data;
    block.rows = rows.rowCount;
    block.cols = rows.cols;
    block.bits = scheme.bits;
    block.groupWidth = scheme.groupWidth(rows.cols);
    block.groups = scheme.groupsPerRow(rows.cols);
    block.words = scheme.packedWordsPerRow(rows.cols);
    block.divisor = scheme.scaleDivisor();
    block.tensor = rows.tensor;
    return block;
}

/// The CUDA backend: validation and error naming here, arithmetic in core/quant/cuda.
class CudaBackend final : public QuantBackend
{
  public:
    explicit CudaBackend(const BackendOptions& options)
        : m_engine(cuda::EngineOptions{options.cudaDeviceMemory, options.cudaStreams, 0}),
          m_description("CUDA: " + cuda::deviceDescription())
    {
    }

    Backend kind() const override { return Backend::Cuda; }
    std::string description() const override { return m_description; }

    void computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut,
                       unsigned /*threads*/) const override
    {
        const auto block = blockOf(rows, scheme);
        finish(rows, m_engine.computeScales(block, scalesOut));
    }

    void quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                      std::int32_t* packedOut, unsigned /*threads*/) const override
    {
        const auto block = blockOf(rows, scheme);
        finish(rows, m_engine.quantizeRows(block, scales, packedOut));
    }

    void quantizeBlock(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut,
                       std::int32_t* packedOut, unsigned /*threads*/) const override
    {
        const auto block = blockOf(rows, scheme);
        finish(rows, m_engine.quantize(block, scalesOut, packedOut));
    }

    void errorStatsRows(const WeightRows& rows, const QuantScheme& scheme, unsigned histogramStride,
                        kernels::RowErrorPartials* perRow, kernels::StatsHistograms& histograms,
                        unsigned /*threads*/) const override
    {
        const auto block = blockOf(rows, scheme);
        // The same host expressions as statskernels.cpp, so the float bin factors are identical.
        const float range = static_cast<float>(scheme.packOffset());
        cuda::StatsLayout layout;
        layout.qBins = scheme.qMax() - scheme.qMin() + 1;
        layout.weightBins = kernels::kWeightBins;
        layout.errorBins = kernels::kErrorBins;
        layout.absErrBins = kernels::kAbsErrBins;
        layout.absErrShift = kernels::kAbsErrShift;
        layout.errorLo = kernels::kErrorLo;
        layout.wLo = -range;
        layout.wInv = static_cast<float>(kernels::kWeightBins) / (2 * range);
        layout.eInv = static_cast<float>(kernels::kErrorBins) / (-2 * kernels::kErrorLo);
        layout.sampleStride = histogramStride;
        layout.sampleChunkShift = kernels::kSampleChunkShift;
        layout.firstRow = rows.firstRow;
        if (histograms.q.size() < static_cast<std::size_t>(layout.qBins) ||
            histograms.weight.size() < static_cast<std::size_t>(layout.weightBins + 1) ||
            histograms.error.size() < static_cast<std::size_t>(layout.errorBins + 1) ||
            histograms.absErr.size() < static_cast<std::size_t>(layout.absErrBins + 1)) {
            throw std::logic_error("errorStatsRows: histogram buffers smaller than the bins");
        }
        std::vector<cuda::RowPartials> partials(rows.rowCount);
        const cuda::Histograms targets{histograms.q.data(), histograms.weight.data(), histograms.error.data(),
                                       histograms.absErr.data()};
        finish(rows, m_engine.errorStats(block, layout, partials.data(), targets));
        for (std::size_t r = 0; r < partials.size(); ++r) {
            const auto& p = partials[r];
            auto& out = perRow[r];
            out.sumW2 = p.sumW2;
            out.sumAbsW = p.sumAbsW;
            out.sumErr2 = p.sumErr2;
            out.sumAbsErr = p.sumAbsErr;
            out.sumErr2Exact = p.sumErr2Exact;
            out.maxAbsErr = p.maxAbsErr;
            out.dequantNonFinite = p.dequantNonFinite;
            out.epsScales = p.epsScales;
        }
    }

  private:
    static void finish(const WeightRows& rows, std::uint64_t firstBad)
    {
        if (firstBad != cuda::kNoIndex) {
            rows.throwNonFinite(static_cast<std::size_t>(firstBad));
        }
    }

    // The engine serialises its calls; the backend's methods are logically const.
    mutable cuda::Engine m_engine;
    std::string m_description;
};

#endif

} // namespace

const QuantBackend& cpuBackend()
{
    static const CpuBackend backend;
    return backend;
}

CudaKernelFigures cudaKernelBenchmark(const WeightRows& rows, const QuantScheme& scheme, int reps)
{
#if SPARK_HAVE_CUDA
    if (!cudaAvailable()) {
        throw std::runtime_error("CUDA benchmark requested but " + cudaDeviceDescription());
    }
    const auto block = blockOf(rows, scheme);
    // One stream's share must hold the weights, scales and packed words; the copy target is the other.
    const std::size_t bytes =
        rows.rowCount * (rows.cols * rows.elementBytes() + block.groups * 4 + block.words * 4);
    cuda::EngineOptions options;
    options.deviceMemoryBytes = 2 * (bytes + (std::size_t{16} << 20));
    cuda::Engine engine(options);
    const auto f = engine.benchmark(block, reps);
    return CudaKernelFigures{f.kernelInputGBs, f.kernelTrafficGBs, f.copyTrafficGBs};
#else
    (void)rows;
    (void)scheme;
    (void)reps;
    throw std::runtime_error("CUDA benchmark requested but " + cudaDeviceDescription());
#endif
}

std::unique_ptr<QuantBackend> makeBackend(Backend requested, std::string* notice,
                                          const BackendOptions& options)
{
    if (notice) {
        notice->clear();
    }
    if (requested == Backend::Cpu) {
        return std::make_unique<CpuBackend>();
    }
#if SPARK_HAVE_CUDA
    if (cudaAvailable()) {
        try {
            return std::make_unique<CudaBackend>(options);
        } catch (const std::exception& e) {
            if (requested == Backend::Cuda) {
                throw std::runtime_error(std::string("CUDA backend requested but it could not start: ") +
                                         e.what());
            }
            if (notice) {
                *notice = std::string("CUDA device unusable (") + e.what() + "): using the CPU backend";
            }
            return std::make_unique<CpuBackend>();
        }
    }
#else
    (void)options;
#endif
    if (requested == Backend::Cuda) {
        throw std::runtime_error("CUDA backend requested but " + cudaDeviceDescription());
    }
    if (notice) {
        *notice = cudaCompiledIn() ? "no CUDA device: using the CPU backend"
                                   : "no CUDA support in this build: using the CPU backend";
    }
    return std::make_unique<CpuBackend>();
}

} // namespace spark
