#pragma once
// The CUDA quantization engine as seen from plain C++: no CUDA header and no sparkcore type crosses
// this boundary, so sparkcore (host compiler, -Werror) can include it, and the separately compiled
// CUDA library (sparkcuda) never links back into sparkcore. core/quant/quantbackend.cpp adapts
// WeightRows/QuantScheme to these types and turns a returned non-finite index into a QuantError.
//
// Everything the kernels compute mirrors core/quant/rtnscalar.h and the SIMD kernels operation by
// operation (format-spec §2.2, §2.3), so packed words and scales are bit-identical to the CPU backend.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>

namespace spark::cuda {

/// @brief Source element types the kernels read (little-endian, as in safetensors).
enum class ElementType : std::uint8_t { BF16, F16, F32 };

/// @brief Returned when every element was finite.
inline constexpr std::uint64_t kNoIndex = std::numeric_limits<std::uint64_t>::max();

/// @brief One block of rows of a 2-D weight and the scheme's derived sizes (all validated by the caller:
/// bits 4|8, groupWidth divides cols unless it equals cols, groups = cols / groupWidth).
struct Block
{
    ElementType type = ElementType::BF16;
    const void* data = nullptr; ///< host memory, rows * cols elements, row-major
    std::size_t rows = 0;
    std::size_t cols = 0;
    int bits = 4;
    std::size_t groupWidth = 128; ///< columns per scale (cols when per channel)
    std::size_t groups = 1;       ///< scales per row
    std::size_t words = 0;        ///< int32 words per packed row: ceil(cols * bits / 32)
    float divisor = 7.5f;         ///< QuantScheme::scaleDivisor()
    std::string_view tensor;      ///< named in every error message
};

/// @brief The fixed histogram layout of core/quant/statskernels.h, passed in so both backends share
/// one definition (and the same float constants computed by the same host expressions).
struct StatsLayout
{
    int qBins = 16;        ///< qMax - qMin + 1
    int weightBins = 64;   ///< plus one overflow bin (never used by the weight histogram)
    int errorBins = 64;    ///< plus one bin for non-finite dequantized values
    int absErrBins = 8192; ///< plus one bin for non-finite dequantized values
    int absErrShift = 18;
    float errorLo = -0.64f;
    float wLo = -8.0f;  ///< -2^(bits-1)
    float wInv = 4.0f;  ///< weightBins / (2 * 2^(bits-1)), float as on the CPU
    float eInv = 50.0f; ///< errorBins / (-2 * errorLo), float as on the CPU
    /// The histogram sample (kernels::histogramSampled()): row r of the tensor, column k is counted when
    /// ((k >> sampleChunkShift) + r) mod sampleStride is 0; rows of the block start at firstRow.
    unsigned sampleStride = 1;
    int sampleChunkShift = 6;
    std::uint64_t firstRow = 0;
};

/// @brief Sums of one row (the layout of kernels::RowErrorPartials, field for field).
struct RowPartials
{
    double sumW2 = 0;
    double sumAbsW = 0;
    double sumErr2 = 0;
    double sumAbsErr = 0;
    double sumErr2Exact = 0;
    float maxAbsErr = 0;
    std::uint32_t dequantNonFinite = 0;
    std::uint32_t epsScales = 0;
};

/// @brief Histogram outputs; counts are ADDED to these arrays (sizes: qBins, weightBins + 1,
/// errorBins + 1, absErrBins + 1).
struct Histograms
{
    std::uint32_t* q = nullptr;
    std::uint32_t* weight = nullptr;
    std::uint32_t* error = nullptr;
    std::uint32_t* absErr = nullptr;
};

/// @brief Throughput figures of benchmark(), in GB/s (1e9 bytes per second).
struct BenchFigures
{
    double kernelInputGBs = 0;   ///< weight bytes read per second by the fused kernel (device-resident)
    double kernelTrafficGBs = 0; ///< (weights read + scales + packed written) per second
    double copyTrafficGBs = 0;   ///< cudaMemcpy device-to-device, (read + write) bytes per second
    std::size_t bytes = 0;       ///< weight bytes of the workload
};

/// @brief True when a CUDA device can be used. Never throws.
bool deviceAvailable() noexcept;

/// @brief "NVIDIA H200 (sm_90, 139.8 GiB, 132 SMs, CUDA runtime 13.0, driver 13.0)", or why there is
/// no device ("no CUDA device: <runtime message>"). Never throws.
std::string deviceDescription() noexcept;

/// @brief Streaming limits of an Engine.
struct EngineOptions
{
    std::size_t deviceMemoryBytes = std::size_t{256} << 20; ///< device memory of all streams together
    int streams = 2;                                        ///< copy/compute pipelines (at least 2)
    int device = 0;
};

/// @brief Runs the kernels on one device. Rows flow through pinned staging buffers in chunks that fit
/// the device memory budget, one chunk per stream in turn, so that the copies of one chunk overlap the
/// kernels of the next. Calls are serialised (a mutex), so an Engine may be shared between threads.
/// Every method returns the first non-finite flat index of the block (row * cols + col) or kNoIndex;
/// outputs are unspecified when it is not kNoIndex. CUDA runtime failures throw std::runtime_error
/// naming the tensor.
class Engine
{
  public:
    /// Throws std::runtime_error when no device is usable.
    explicit Engine(const EngineOptions& options = {});
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    /// @brief Scales `[rows, groups]` in the weight dtype (raw little-endian bits).
    std::uint64_t computeScales(const Block& block, void* scalesOut);
    /// @brief Packed words `[rows, words]` for the given scales (weight dtype).
    std::uint64_t quantizeRows(const Block& block, const void* scales, std::int32_t* packedOut);
    /// @brief Both in one pass over the weights.
    std::uint64_t quantize(const Block& block, void* scalesOut, std::int32_t* packedOut);
    /// @brief Per-row partial sums (one per row of the block) and histogram counts.
    std::uint64_t errorStats(const Block& block, const StatsLayout& layout, RowPartials* perRow,
                             const Histograms& histograms);

    /// @brief Times the fused kernel on @p block resident in device memory (it must fit one stream's
    /// share of the budget) and a device-to-device copy of the same bytes; best of @p reps.
    BenchFigures benchmark(const Block& block, int reps);

    const EngineOptions& options() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace spark::cuda
