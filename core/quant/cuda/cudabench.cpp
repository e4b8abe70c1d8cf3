// spark-cudabench [--gib N] [--reps N]: throughput of the CUDA engine on a generated bf16 workload
// (packaging/device-check.sh). Prints, per scheme, the fused quantize kernel's GB/s on device-resident
// weights, the device's own cudaMemcpy device-to-device bandwidth as the reference, and the end-to-end
// GB/s of streaming the weights from host memory through the pinned staging buffers.
#include "core/quant/cuda/cudaengine.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// bf16 bits of roughly normal weights (sum of uniforms), deterministic and fast.
std::vector<std::uint16_t> workload(std::size_t count)
{
    std::vector<std::uint16_t> data(count);
    std::uint64_t state = 0x9E3779B97F4A7C15ull;
    for (auto& v : data) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const auto a = static_cast<float>((state >> 40) & 0xFFFFFF) / 16777216.0f;
        const auto b = static_cast<float>((state >> 16) & 0xFFFFFF) / 16777216.0f;
        const float w = (a + b - 1.0f) * 0.05f;
        std::uint32_t bits;
        std::memcpy(&bits, &w, 4);
        v = static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
    }
    return data;
}

} // namespace

int main(int argc, char** argv)
{
    double gib = 0.5;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--gib") == 0) {
            gib = std::atof(argv[i + 1]);
        } else if (std::strcmp(argv[i], "--reps") == 0) {
            reps = std::atoi(argv[i + 1]);
        } else {
            std::fprintf(stderr, "usage: spark-cudabench [--gib N] [--reps N]\n");
            return 2;
        }
    }
    if (!spark::cuda::deviceAvailable()) {
        std::fprintf(stderr, "spark-cudabench: %s\n", spark::cuda::deviceDescription().c_str());
        return 1;
    }
    try {
        const std::size_t cols = 8192;
        const auto rows = static_cast<std::size_t>(gib * double(1u << 30) / 2.0 / double(cols));
        const auto data = workload(rows * cols);
        std::printf("device: %s\n", spark::cuda::deviceDescription().c_str());
        std::printf("workload: bf16 [%zu, %zu], %.2f GiB, best of %d\n", rows, cols,
                    static_cast<double>(rows * cols * 2) / double(1u << 30), reps);
        // Room for the whole workload in one stream's share (the benchmark keeps it device-resident).
        spark::cuda::EngineOptions options;
        options.deviceMemoryBytes = 2 * (rows * cols * 2 + rows * cols + (std::size_t{64} << 20));
        spark::cuda::Engine engine(options);
        // End to end: the default streaming budget (256 MiB over 2 streams), as the exporter runs it.
        spark::cuda::Engine streaming;
        struct Scheme
        {
            int bits;
            int group;
        };
        for (const Scheme s : {Scheme{4, 128}, Scheme{4, 32}, Scheme{8, -1}}) {
            spark::cuda::Block block;
            block.type = spark::cuda::ElementType::BF16;
            block.data = data.data();
            block.rows = rows;
            block.cols = cols;
            block.bits = s.bits;
            block.groupWidth = s.group < 0 ? cols : static_cast<std::size_t>(s.group);
            block.groups = cols / block.groupWidth;
            block.words = cols * static_cast<std::size_t>(s.bits) / 32;
            block.divisor = s.bits == 4 ? 7.5f : 127.5f;
            block.tensor = "bench.weight";
            const auto f = engine.benchmark(block, reps);
            std::vector<std::byte> scales(rows * block.groups * 2);
            std::vector<std::int32_t> packed(rows * block.words);
            double best = 0;
            for (int i = 0; i <= reps; ++i) { // the first run warms up
                const auto t0 = std::chrono::steady_clock::now();
                if (streaming.quantize(block, scales.data(), packed.data()) != spark::cuda::kNoIndex) {
                    throw std::runtime_error("non-finite value in the generated workload");
                }
                const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (i > 0 && (best == 0 || t < best)) {
                    best = t;
                }
            }
            const double endToEnd = static_cast<double>(f.bytes) / best * 1e-9;
            const std::string label =
                "w" + std::to_string(s.bits) + (s.group < 0 ? " channel" : " g" + std::to_string(s.group));
            std::printf("%-12s kernel %8.1f GB/s in (%8.1f GB/s traffic = %5.1f%% of D2D copy %8.1f GB/s) | "
                        "end-to-end %6.1f GB/s\n",
                        label.c_str(), f.kernelInputGBs, f.kernelTrafficGBs,
                        100.0 * f.kernelTrafficGBs / f.copyTrafficGBs, f.copyTrafficGBs, endToEnd);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "spark-cudabench: %s\n", e.what());
        return 1;
    }
    return 0;
}
