#pragma once

#include "core/quant/rtn.h"
#include "core/quant/statskernels.h"
#include "core/quant/weightrows.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace spark {

/// @brief Where quantization runs (`--backend auto|cpu|cuda`).
enum class Backend {
    Auto, ///< CUDA when a device is present, otherwise the CPU (with a notice)
    Cpu,  ///< Highway SIMD on every core (core/quant/rtn.h)
    Cuda, ///< core/quant/cuda; an error when no device is present
};

/// @brief "auto", "cpu" or "cuda" (case-sensitive); std::nullopt for anything else.
std::optional<Backend> parseBackend(std::string_view text);
/// @brief "auto", "cpu" or "cuda".
const char* backendName(Backend backend);

/// @brief True when this build contains the CUDA backend (SPARK_CUDA found nvcc).
bool cudaCompiledIn() noexcept;
/// @brief True when the CUDA backend is compiled in AND a device that can run its kernels is present.
/// Never throws; false in a build without CUDA.
bool cudaAvailable() noexcept;
/// @brief The device ("NVIDIA H200 (sm_90, 139.8 GiB, ...)") or why there is none.
std::string cudaDeviceDescription();

/// @brief Settings of the CUDA backend (ignored by the CPU backend).
struct BackendOptions
{
    std::size_t cudaDeviceMemory = std::size_t{256} << 20; ///< device memory for streaming, all streams
    int cudaStreams = 2;                                   ///< copy/compute pipelines
};

/// @brief The one interface both backends sit behind. Every method has the contract of the function of
/// the same name in core/quant/rtn.h (validation, QuantError NonFinite with the tensor and the first bad
/// flat index, nothing else reported for that block), and the two backends produce bit-identical scales
/// and packed words. Implementations are thread-safe (the CUDA one serialises calls).
/// A CUDA runtime failure is a std::runtime_error naming the tensor.
class QuantBackend
{
  public:
    virtual ~QuantBackend() = default;

    virtual Backend kind() const = 0;
    /// @brief "CPU (AVX2)", "CUDA: NVIDIA H200 (sm_90, ...)".
    virtual std::string description() const = 0;

    /// @brief As spark::computeScales(). @p threads is the CPU thread count (0 = all cores).
    virtual void computeScales(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut,
                               unsigned threads = 1) const = 0;
    /// @brief As spark::quantizeRows().
    virtual void quantizeRows(const WeightRows& rows, const QuantScheme& scheme, const std::byte* scales,
                              std::int32_t* packedOut, unsigned threads = 1) const = 0;
    /// @brief computeScales() then quantizeRows() of the same block; the CUDA backend does both in one
    /// pass over the weights (one upload instead of two), so the exporter should prefer it.
    virtual void quantizeBlock(const WeightRows& rows, const QuantScheme& scheme, std::byte* scalesOut,
                               std::int32_t* packedOut, unsigned threads = 1) const = 0;
    /// @brief What ErrorStatsAccumulator::addRows() needs: one kernels::RowErrorPartials per row of the
    /// block in @p perRow (to be reduced in row order by the caller) and the histogram counts of the
    /// elements sampled at @p histogramStride (kernels::histogramSampled(), rows counted from
    /// rows.firstRow) ADDED to @p histograms (32-bit: blocks must stay below 2^32 elements). Throws
    /// QuantError (NonFinite) like computeScales(); the outputs are then unspecified. CPU and CUDA agree
    /// exactly on counts, histograms, maxAbsErr, epsScales and dequantNonFinite; the float64 sums differ only
    /// in the association of additions of non-negative terms (relative difference below about cols * 2^-53
    /// per row), so rel_err agrees to 1e-12 relative.
    virtual void errorStatsRows(const WeightRows& rows, const QuantScheme& scheme, unsigned histogramStride,
                                kernels::RowErrorPartials* perRow, kernels::StatsHistograms& histograms,
                                unsigned threads = 1) const = 0;

    /// @brief quantizeBlock() into new buffers (tests, small tensors), like spark::quantize().
    QuantizedWeight quantize(const WeightRows& rows, const QuantScheme& scheme, unsigned threads = 1) const;
};

/// @brief Device-side throughput of the CUDA kernels (GB/s = 1e9 bytes per second).
struct CudaKernelFigures
{
    double kernelInputGBs = 0;   ///< weight bytes read per second by the fused scale+quantize+pack kernel
    double kernelTrafficGBs = 0; ///< weights read + scales and packed words written, per second
    double copyTrafficGBs = 0;   ///< the device's own cudaMemcpy device-to-device (read + write) bandwidth
};

/// @brief Times the fused kernel on @p rows copied once to device memory (a separate engine sized for
/// it) against a device-to-device copy of the same bytes; best of @p reps. Throws std::runtime_error
/// when no device is usable (or the build has no CUDA), QuantError for an invalid block.
CudaKernelFigures cudaKernelBenchmark(const WeightRows& rows, const QuantScheme& scheme, int reps = 5);

/// @brief The CPU backend, shared (it has no state).
const QuantBackend& cpuBackend();

/// @brief The backend for @p requested. Auto: CUDA when cudaAvailable(), otherwise the CPU and, when
/// @p notice is given, a one-line notice ("no CUDA device: using the CPU backend"); otherwise the
/// notice is cleared. Cuda without a usable device throws std::runtime_error
/// ("CUDA backend requested but ...").
std::unique_ptr<QuantBackend> makeBackend(Backend requested, std::string* notice = nullptr,
                                          const BackendOptions& options = {});

} // namespace spark
