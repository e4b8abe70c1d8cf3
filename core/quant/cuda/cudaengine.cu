// Streaming host side of the CUDA engine: chunks of rows go through pinned staging buffers with
// asynchronous copies, one chunk per stream in turn, so the copies and kernels of neighbouring chunks
// overlap; device memory stays within EngineOptions::deviceMemoryBytes whatever the tensor size.
#include "core/quant/cuda/cudaengine.h"
#include "core/quant/cuda/cudakernels.cuh"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace spark::cuda {

namespace {

constexpr std::size_t kAlign = 256;

std::size_t alignUp(std::size_t n)
{
    return (n + kAlign - 1) / kAlign * kAlign;
}

std::size_t elementBytes(ElementType type)
{
    return type == ElementType::F32 ? 4 : 2;
}

std::string errorText(cudaError_t error)
{
    return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

/// Throws the runtime error as a message naming the tensor and what was being done.
void check(cudaError_t error, const char* what, std::string_view tensor)
{
    if (error != cudaSuccess) {
        const std::string subject =
            tensor.empty() ? std::string() : " for tensor '" + std::string(tensor) + "'";
        throw std::runtime_error("CUDA error while " + std::string(what) + subject + ": " + errorText(error));
    }
}

std::string gib(std::size_t bytes)
{
    const double value = static_cast<double>(bytes) / double(1u << 30);
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", value);
    return text;
}

/// One buffer of a chunk: offset within the slot's device region and (when staged) host region.
struct Part
{
    std::size_t device = 0;
    std::size_t host = 0;
    std::size_t bytes = 0;
};

} // namespace

bool deviceAvailable() noexcept
{
    static const bool available = [] {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
            cudaGetLastError();
            return false;
        }
        if (cudaSetDevice(0) != cudaSuccess || kernels::checkKernelImage() != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return true;
    }();
    return available;
}

std::string deviceDescription() noexcept
{
    try {
        int count = 0;
        const cudaError_t error = cudaGetDeviceCount(&count);
        if (error != cudaSuccess || count <= 0) {
            cudaGetLastError();
            return "no CUDA device: " + (error != cudaSuccess ? errorText(error) : std::string("none found"));
        }
        cudaDeviceProp props{};
        if (cudaGetDeviceProperties(&props, 0) != cudaSuccess) {
            cudaGetLastError();
            return "no CUDA device: cannot read the properties of device 0";
        }
        int runtime = 0;
        int driver = 0;
        cudaRuntimeGetVersion(&runtime);
        cudaDriverGetVersion(&driver);
        std::string text = std::string(props.name) + " (sm_" + std::to_string(props.major) +
                           std::to_string(props.minor) + ", " + gib(props.totalGlobalMem) + ", " +
                           std::to_string(props.multiProcessorCount) + " SMs, CUDA runtime " +
                           std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
                           ", driver " + std::to_string(driver / 1000) + "." +
                           std::to_string(driver % 1000 / 10) + ")";
        if (cudaSetDevice(0) == cudaSuccess) {
            const cudaError_t image = kernels::checkKernelImage();
            if (image != cudaSuccess) {
                cudaGetLastError();
                text += " - unusable: this build has no kernel image for it (" + errorText(image) + ")";
            }
        }
        return text;
    } catch (...) {
        return "no CUDA device: unknown error";
    }
}

struct Engine::Impl
{
    struct Slot
    {
        cudaStream_t stream = nullptr;
        cudaEvent_t done = nullptr;
        bool busy = false;
        std::size_t firstRow = 0;
        std::size_t rows = 0;
    };

    EngineOptions options;
    int smCount = 1;
    std::size_t slotBytes = 0;
    std::byte* deviceRegion = nullptr; ///< slots.size() * slotBytes
    std::byte* hostRegion = nullptr;   ///< pinned, same size
    std::vector<Slot> slots;
    std::mutex mutex;

    explicit Impl(const EngineOptions& opts) : options(opts)
    {
        options.streams = std::max(2, options.streams);
        if (!deviceAvailable()) {
            throw std::runtime_error("CUDA backend requested but " + deviceDescription());
        }
        check(cudaSetDevice(options.device), "selecting the device", "");
        check(cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, options.device),
              "reading the device attributes", "");
        slotBytes = options.deviceMemoryBytes / static_cast<std::size_t>(options.streams) / kAlign * kAlign;
        if (slotBytes < (std::size_t{1} << 20)) {
            throw std::runtime_error("CUDA device memory budget of " +
                                     std::to_string(options.deviceMemoryBytes) +
                                     " bytes is too small (at least 1 MiB per stream)");
        }
        slots.resize(static_cast<std::size_t>(options.streams));
        try {
            for (auto& slot : slots) {
                check(cudaStreamCreateWithFlags(&slot.stream, cudaStreamNonBlocking), "creating a stream",
                      "");
                check(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming), "creating an event", "");
            }
        } catch (...) {
            release();
            throw;
        }
    }

    ~Impl() { release(); }

    void release()
    {
        for (auto& slot : slots) {
            if (slot.stream) {
                cudaStreamSynchronize(slot.stream);
                cudaStreamDestroy(slot.stream);
            }
            if (slot.done) {
                cudaEventDestroy(slot.done);
            }
        }
        slots.clear();
        cudaFree(deviceRegion);
        cudaFreeHost(hostRegion);
        deviceRegion = nullptr;
        hostRegion = nullptr;
    }

    /// Allocates the regions on first use, so creating an engine is cheap.
    void ensureBuffers(std::string_view tensor)
    {
        check(cudaSetDevice(options.device), "selecting the device", tensor);
        if (deviceRegion) {
            return;
        }
        const std::size_t total = slotBytes * slots.size();
        check(cudaMalloc(&deviceRegion, total), "allocating the device staging memory", tensor);
        check(cudaMallocHost(&hostRegion, total), "allocating pinned host staging memory", tensor);
    }

    std::byte* dev(const Slot& slot, const Part& part)
    {
        return deviceRegion + static_cast<std::size_t>(&slot - slots.data()) * slotBytes + part.device;
    }
    std::byte* host(const Slot& slot, const Part& part)
    {
        return hostRegion + static_cast<std::size_t>(&slot - slots.data()) * slotBytes + part.host;
    }

    /// Queues the start of every chunk: its weight rows copied through pinned memory to the device, and
    /// its error index cleared (all bits set: no bad element).
    void uploadWeights(Slot& slot, const Part& weights, const Part& bad, const std::byte* rows,
                       std::size_t bytes, std::string_view tensor)
    {
        std::memcpy(host(slot, weights), rows, bytes);
        check(cudaMemcpyAsync(dev(slot, weights), host(slot, weights), bytes, cudaMemcpyHostToDevice,
                              slot.stream),
              "copying weights to the device", tensor);
        check(cudaMemsetAsync(dev(slot, bad), 0xFF, bad.bytes, slot.stream), "clearing the error index",
              tensor);
    }

    /// Queues the copy of the chunk's error index back to the host (the last step of every chunk).
    void downloadErrorIndex(Slot& slot, const Part& bad, std::string_view tensor)
    {
        check(
            cudaMemcpyAsync(host(slot, bad), dev(slot, bad), bad.bytes, cudaMemcpyDeviceToHost, slot.stream),
            "copying the error index from the device", tensor);
    }

    /// The finished chunk's first non-finite index (relative to the chunk), or kNoIndex.
    std::uint64_t errorIndex(const Slot& slot, const Part& bad)
    {
        unsigned long long index;
        std::memcpy(&index, host(slot, bad), sizeof index);
        return index == ~0ull ? kNoIndex : static_cast<std::uint64_t>(index);
    }

    /// Waits for everything in flight, ignoring errors (used when unwinding after a failure).
    void drainQuietly()
    {
        for (auto& slot : slots) {
            cudaStreamSynchronize(slot.stream);
            slot.busy = false;
        }
        cudaGetLastError();
    }

    /// Runs chunks of at most @p chunkRows rows: issue(slot) queues the copies and kernels of the slot's
    /// chunk, collect(slot) copies its results out once it is done and returns the chunk's first
    /// non-finite flat index. Chunks are collected in order, so the first one that reports an index
    /// holds the first bad element of the block; no chunk is issued after it.
    template <typename Issue, typename Collect>
    std::uint64_t pipeline(const Block& block, std::size_t chunkRows, Issue issue, Collect collect)
    {
        std::uint64_t firstBad = kNoIndex;
        std::size_t nextSlot = 0;
        auto finish = [&](Slot& slot) {
            if (!slot.busy) {
                return;
            }
            check(cudaEventSynchronize(slot.done), "running the kernels", block.tensor);
            slot.busy = false;
            const std::uint64_t bad = collect(slot);
            if (bad != kNoIndex && firstBad == kNoIndex) {
                firstBad = static_cast<std::uint64_t>(slot.firstRow) * block.cols + bad;
            }
        };
        try {
            for (std::size_t row = 0; row < block.rows && firstBad == kNoIndex;) {
                Slot& slot = slots[nextSlot];
                nextSlot = (nextSlot + 1) % slots.size();
                finish(slot);
                if (firstBad != kNoIndex) {
                    break;
                }
                slot.firstRow = row;
                slot.rows = std::min(chunkRows, block.rows - row);
                issue(slot);
                check(cudaGetLastError(), "launching the kernels", block.tensor);
                check(cudaEventRecord(slot.done, slot.stream), "recording an event", block.tensor);
                slot.busy = true;
                row += slot.rows;
            }
            // The oldest chunk in flight sits in the slot that would be used next.
            for (std::size_t i = 0; i < slots.size(); ++i) {
                finish(slots[(nextSlot + i) % slots.size()]);
            }
        } catch (...) {
            drainQuietly();
            throw;
        }
        return firstBad;
    }

    /// Lays out @p perRow bytes per row (each buffer aligned) plus @p fixed bytes in a slot and returns
    /// how many rows fit.
    std::size_t rowsPerChunk(const Block& block, std::size_t perRow, std::size_t fixed, int buffers) const
    {
        const std::size_t slack = static_cast<std::size_t>(buffers) * kAlign + fixed;
        const std::size_t rows =
            slotBytes > slack ? (slotBytes - slack) / std::max<std::size_t>(perRow, 1) : 0;
        if (rows == 0) {
            throw std::runtime_error("a row of tensor '" + std::string(block.tensor) + "' (" +
                                     std::to_string(perRow) +
                                     " bytes) does not fit the CUDA memory budget of " +
                                     std::to_string(slotBytes) + " bytes per stream");
        }
        return rows;
    }

    std::uint64_t quantize(const Block& block, unsigned mode, void* scalesOut, const void* scalesIn,
                           std::int32_t* packedOut)
    {
        std::lock_guard lock(mutex);
        if (block.rows == 0) {
            return kNoIndex;
        }
        ensureBuffers(block.tensor);
        const std::size_t inRow = block.cols * elementBytes(block.type);
        const std::size_t scaleRow = block.groups * elementBytes(block.type);
        const std::size_t packedRow = block.words * 4;
        const bool pack = (mode & kernels::kPack) != 0;
        const bool readScales = (mode & kernels::kReadScales) != 0;
        const bool writeScales = (mode & kernels::kWriteScales) != 0;
        const std::size_t perRow = inRow + scaleRow + (pack ? packedRow : 0);
        const std::size_t chunkRows = rowsPerChunk(block, perRow, sizeof(unsigned long long), 4);

        // Device: weights | scales | packed | bad. Host: weights | scales (in) | scales (out) | packed | bad.
        Part weights{0, 0, chunkRows * inRow};
        Part scales{alignUp(weights.device + weights.bytes), alignUp(weights.host + weights.bytes),
                    chunkRows * scaleRow};
        Part packed{alignUp(scales.device + scales.bytes), alignUp(scales.host + scales.bytes),
                    pack ? chunkRows * packedRow : 0};
        Part bad{alignUp(packed.device + packed.bytes), alignUp(packed.host + packed.bytes),
                 sizeof(unsigned long long)};

        const auto* source = static_cast<const std::byte*>(block.data);
        auto issue = [&](Slot& slot) {
            const std::size_t n = slot.rows;
            uploadWeights(slot, weights, bad, source + slot.firstRow * inRow, n * inRow, block.tensor);
            if (readScales) {
                std::memcpy(host(slot, scales),
                            static_cast<const std::byte*>(scalesIn) + slot.firstRow * scaleRow, n * scaleRow);
                check(cudaMemcpyAsync(dev(slot, scales), host(slot, scales), n * scaleRow,
                                      cudaMemcpyHostToDevice, slot.stream),
                      "copying scales to the device", block.tensor);
            }
            kernels::launchQuantize(block, n, dev(slot, weights), dev(slot, scales),
                                    reinterpret_cast<std::int32_t*>(dev(slot, packed)), nullptr, mode,
                                    reinterpret_cast<unsigned long long*>(dev(slot, bad)), smCount,
                                    slot.stream);
            if (writeScales) {
                check(cudaMemcpyAsync(host(slot, scales), dev(slot, scales), n * scaleRow,
                                      cudaMemcpyDeviceToHost, slot.stream),
                      "copying scales from the device", block.tensor);
            }
            if (pack) {
                check(cudaMemcpyAsync(host(slot, packed), dev(slot, packed), n * packedRow,
                                      cudaMemcpyDeviceToHost, slot.stream),
                      "copying packed words from the device", block.tensor);
            }
            downloadErrorIndex(slot, bad, block.tensor);
        };
        auto collect = [&](Slot& slot) -> std::uint64_t {
            if (const std::uint64_t index = errorIndex(slot, bad); index != kNoIndex) {
                return index;
            }
            if (writeScales) {
                std::memcpy(static_cast<std::byte*>(scalesOut) + slot.firstRow * scaleRow, host(slot, scales),
                            slot.rows * scaleRow);
            }
            if (pack) {
                std::memcpy(reinterpret_cast<std::byte*>(packedOut) + slot.firstRow * packedRow,
                            host(slot, packed), slot.rows * packedRow);
            }
            return kNoIndex;
        };
        return pipeline(block, chunkRows, issue, collect);
    }

    std::uint64_t errorStats(const Block& block, const StatsLayout& layout, RowPartials* perRowOut,
                             const Histograms& histograms)
    {
        std::lock_guard lock(mutex);
        if (block.rows == 0) {
            return kNoIndex;
        }
        ensureBuffers(block.tensor);
        const std::size_t inRow = block.cols * elementBytes(block.type);
        const std::size_t scaleRow = block.groups * elementBytes(block.type);
        const std::size_t histWords = kernels::statsHistogramWords(layout);
        const std::size_t histBytes = histWords * sizeof(std::uint32_t);
        const std::size_t perRow = inRow + scaleRow + block.groups + sizeof(RowPartials);
        const std::size_t chunkRows = rowsPerChunk(block, perRow, histBytes + sizeof(unsigned long long), 6);

        // Device: weights | scales | eps flags | partials | histograms | bad.
        // Host: weights | partials | histograms | bad (scales and flags stay on the device).
        Part weights{0, 0, chunkRows * inRow};
        Part scales{alignUp(weights.device + weights.bytes), 0, chunkRows * scaleRow};
        Part eps{alignUp(scales.device + scales.bytes), 0, chunkRows * block.groups};
        Part partials{alignUp(eps.device + eps.bytes), alignUp(weights.host + weights.bytes),
                      chunkRows * sizeof(RowPartials)};
        Part hist{alignUp(partials.device + partials.bytes), alignUp(partials.host + partials.bytes),
                  histBytes};
        Part bad{alignUp(hist.device + hist.bytes), alignUp(hist.host + hist.bytes),
                 sizeof(unsigned long long)};

        const auto* source = static_cast<const std::byte*>(block.data);
        auto issue = [&](Slot& slot) {
            const std::size_t n = slot.rows;
            uploadWeights(slot, weights, bad, source + slot.firstRow * inRow, n * inRow, block.tensor);
            check(cudaMemsetAsync(dev(slot, hist), 0, hist.bytes, slot.stream), "clearing the histograms",
                  block.tensor);
            auto* flags = reinterpret_cast<std::uint8_t*>(dev(slot, eps));
            kernels::launchQuantize(
                block, n, dev(slot, weights), dev(slot, scales), nullptr, flags, kernels::kWriteScales,
                reinterpret_cast<unsigned long long*>(dev(slot, bad)), smCount, slot.stream);
            StatsLayout slotLayout = layout; // the histogram sample follows the tensor's rows
            slotLayout.firstRow += slot.firstRow;
            kernels::launchStats(block, slotLayout, n, dev(slot, weights), dev(slot, scales), flags,
                                 reinterpret_cast<RowPartials*>(dev(slot, partials)),
                                 reinterpret_cast<std::uint32_t*>(dev(slot, hist)), smCount, slot.stream);
            check(cudaMemcpyAsync(host(slot, partials), dev(slot, partials), n * sizeof(RowPartials),
                                  cudaMemcpyDeviceToHost, slot.stream),
                  "copying row sums from the device", block.tensor);
            check(cudaMemcpyAsync(host(slot, hist), dev(slot, hist), hist.bytes, cudaMemcpyDeviceToHost,
                                  slot.stream),
                  "copying histograms from the device", block.tensor);
            downloadErrorIndex(slot, bad, block.tensor);
        };
        auto collect = [&](Slot& slot) -> std::uint64_t {
            if (const std::uint64_t index = errorIndex(slot, bad); index != kNoIndex) {
                return index;
            }
            std::memcpy(perRowOut + slot.firstRow, host(slot, partials), slot.rows * sizeof(RowPartials));
            const auto* counts = reinterpret_cast<const std::uint32_t*>(host(slot, hist));
            const std::size_t sizes[4] = {static_cast<std::size_t>(layout.qBins),
                                          static_cast<std::size_t>(layout.weightBins) + 1,
                                          static_cast<std::size_t>(layout.errorBins) + 1,
                                          static_cast<std::size_t>(layout.absErrBins) + 1};
            std::uint32_t* targets[4] = {histograms.q, histograms.weight, histograms.error,
                                         histograms.absErr};
            for (int h = 0; h < 4; ++h) {
                for (std::size_t i = 0; i < sizes[h]; ++i) {
                    targets[h][i] += counts[i];
                }
                counts += sizes[h];
            }
            return kNoIndex;
        };
        return pipeline(block, chunkRows, issue, collect);
    }

    BenchFigures benchmark(const Block& block, int reps)
    {
        BenchFigures figures;
        const std::size_t inBytes = block.rows * block.cols * elementBytes(block.type);
        const std::size_t scaleBytes = block.rows * block.groups * elementBytes(block.type);
        const std::size_t packedBytes = block.rows * block.words * 4;
        figures.bytes = inBytes;
        reps = std::max(1, reps);
        {
            std::lock_guard lock(mutex);
            ensureBuffers(block.tensor);
            if (inBytes + scaleBytes + packedBytes + 4 * kAlign + sizeof(unsigned long long) > slotBytes) {
                throw std::runtime_error("benchmark workload of " + std::to_string(inBytes) +
                                         " bytes does not fit one stream's device memory (" +
                                         std::to_string(slotBytes) + " bytes)");
            }
            Slot& slot = slots[0];
            std::byte* base = deviceRegion;
            std::byte* weights = base;
            std::byte* scales = base + alignUp(inBytes);
            auto* packed = reinterpret_cast<std::int32_t*>(scales + alignUp(scaleBytes));
            auto* bad = reinterpret_cast<unsigned long long*>(reinterpret_cast<std::byte*>(packed) +
                                                              alignUp(packedBytes));
            // The copy target is the second slot's region (the same size as the first).
            std::byte* copyTarget = deviceRegion + slotBytes;
            const std::size_t copyBytes = std::min(inBytes, slotBytes);
            check(cudaMemcpy(weights, block.data, inBytes, cudaMemcpyHostToDevice), "uploading the workload",
                  block.tensor);
            cudaEvent_t start = nullptr;
            cudaEvent_t stop = nullptr;
            check(cudaEventCreate(&start), "creating an event", block.tensor);
            check(cudaEventCreate(&stop), "creating an event", block.tensor);
            auto timeBest = [&](auto&& body) {
                float best = 0;
                for (int i = 0; i < reps + 1; ++i) { // the first run warms up
                    check(cudaEventRecord(start, slot.stream), "recording an event", block.tensor);
                    body();
                    check(cudaEventRecord(stop, slot.stream), "recording an event", block.tensor);
                    check(cudaEventSynchronize(stop), "running the benchmark", block.tensor);
                    float ms = 0;
                    check(cudaEventElapsedTime(&ms, start, stop), "reading a timer", block.tensor);
                    if (i > 0 && (best == 0 || ms < best)) {
                        best = ms;
                    }
                }
                return static_cast<double>(best) * 1e-3;
            };
            try {
                const double kernel = timeBest([&] {
                    cudaMemsetAsync(bad, 0xFF, sizeof *bad, slot.stream);
                    kernels::launchQuantize(block, block.rows, weights, scales, packed, nullptr,
                                            kernels::kWriteScales | kernels::kPack, bad, smCount,
                                            slot.stream);
                    check(cudaGetLastError(), "launching the kernels", block.tensor);
                });
                const double copy = timeBest([&] {
                    check(cudaMemcpyAsync(copyTarget, weights, copyBytes, cudaMemcpyDeviceToDevice,
                                          slot.stream),
                          "copying on the device", block.tensor);
                });
                figures.kernelInputGBs = static_cast<double>(inBytes) / kernel * 1e-9;
                figures.kernelTrafficGBs =
                    static_cast<double>(inBytes + scaleBytes + packedBytes) / kernel * 1e-9;
                figures.copyTrafficGBs = 2.0 * static_cast<double>(copyBytes) / copy * 1e-9;
            } catch (...) {
                cudaEventDestroy(start);
                cudaEventDestroy(stop);
                drainQuietly();
                throw;
            }
            cudaEventDestroy(start);
            cudaEventDestroy(stop);
        }
        return figures;
    }
};

Engine::Engine(const EngineOptions& options) : m_impl(std::make_unique<Impl>(options)) {}

Engine::~Engine() = default;

std::uint64_t Engine::computeScales(const Block& block, void* scalesOut)
{
    return m_impl->quantize(block, kernels::kWriteScales, scalesOut, nullptr, nullptr);
}

std::uint64_t Engine::quantizeRows(const Block& block, const void* scales, std::int32_t* packedOut)
{
    return m_impl->quantize(block, kernels::kReadScales | kernels::kPack, nullptr, scales, packedOut);
}

std::uint64_t Engine::quantize(const Block& block, void* scalesOut, std::int32_t* packedOut)
{
    return m_impl->quantize(block, kernels::kWriteScales | kernels::kPack, scalesOut, nullptr, packedOut);
}

std::uint64_t Engine::errorStats(const Block& block, const StatsLayout& layout, RowPartials* perRow,
                                 const Histograms& histograms)
{
    return m_impl->errorStats(block, layout, perRow, histograms);
}

BenchFigures Engine::benchmark(const Block& block, int reps)
{
    return m_impl->benchmark(block, reps);
}

const EngineOptions& Engine::options() const
{
    return m_impl->options;
}

} // namespace spark::cuda
