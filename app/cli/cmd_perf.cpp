// `perf [--size GIB] [--threads N] [--scheme S|all]... [--backend auto|cpu|cuda]`: throughput of the
// quantization engine on a generated bf16 workload, next to what this machine can read from memory and from a
// warm file, so the ratios show how close the kernels come to the memory bound. With CUDA it also prints the
// kernel's device-side GB/s against the device's own copy bandwidth (cudaMemcpy device-to-device).
#include "args.h"
#include "backendargs.h"
#include "command.h"
#include "core/quant/errorstats.h"
#include "core/quant/quantbackend.h"
#include "core/quant/roundingsearch.h"
#include "core/quant/rtnkernels.h"
#include "core/quant/schemecodec.h"
#include "core/quant/schemesweep.h"
#include "core/util/parallel.h"
#include "format.h"
#include "numericsargs.h"
#include "perfforward.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace spark::cli {

namespace {

constexpr std::size_t kCols = 4096;
constexpr int kRepeats = 3;

double gbPerSecond(std::uint64_t bytes, double seconds)
{
    return static_cast<double>(bytes) / seconds / 1e9;
}

/// Best of kRepeats wall-clock runs of @p work, in seconds (the first run also warms caches/pages).
template <typename Work> double bestSeconds(Work work)
{
    double best = 1e300;
    for (int i = 0; i < kRepeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        best =
            std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

/// Weight-like bf16 values: a cheap hash per element, |w| mostly below 0.1 with the full exponent mix.
void fillWorkload(std::vector<std::uint16_t>& data, unsigned threads)
{
    parallelFor(data.size(), std::size_t{1} << 20, threads, [&](std::size_t begin, std::size_t end) {
        std::uint64_t x = 0x9E3779B97F4A7C15ull ^ begin;
        for (std::size_t i = begin; i < end; ++i) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            const auto sign = static_cast<std::uint16_t>((x >> 20) & 0x8000u);
            data[i] = static_cast<std::uint16_t>(sign | (0x3C00u + (x & 0x03FFu)));
        }
    });
}

std::uint64_t sumWords(const std::byte* data, std::size_t bytes, unsigned threads)
{
    const std::size_t words = bytes / 8;
    std::atomic<std::uint64_t> total{0};
    parallelFor(words, std::size_t{1} << 20, threads, [&](std::size_t begin, std::size_t end) {
        std::uint64_t a = 0, b = 0, c = 0, d = 0;
        const auto* p = reinterpret_cast<const std::uint64_t*>(data);
        std::size_t i = begin;
        for (; i + 4 <= end; i += 4) {
            a += p[i];
            b += p[i + 1];
            c += p[i + 2];
            d += p[i + 3];
        }
        for (; i < end; ++i) {
            a += p[i];
        }
        total += a + b + c + d;
    });
    return total.load();
}

/// pread of the whole file in 32 MiB blocks into one reused buffer, as analyze reads tensors.
void readFile(int fd, std::uint64_t size, std::vector<std::byte>& buffer)
{
    for (std::uint64_t offset = 0; offset < size;) {
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), size - offset));
        const auto got = ::pread(fd, buffer.data(), want, static_cast<off_t>(offset));
        if (got <= 0) {
            throw std::runtime_error("perf: read of the temporary file failed");
        }
        offset += static_cast<std::uint64_t>(got);
    }
}

double measureFileRead(const std::byte* data, std::uint64_t bytes)
{
    const auto path =
        std::filesystem::temp_directory_path() / ("sparkulator-perf-" + std::to_string(::getpid()) + ".bin");
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        throw std::runtime_error("perf: cannot create " + path.string());
    }
    std::filesystem::remove(path); // unlinked now: nothing is left behind even on Ctrl-C
    for (std::uint64_t offset = 0; offset < bytes;) {
        const auto got = ::pwrite(fd, data + offset,
                                  static_cast<std::size_t>(std::min<std::uint64_t>(bytes - offset, 1 << 26)),
                                  static_cast<off_t>(offset));
        if (got <= 0) {
            ::close(fd);
            throw std::runtime_error("perf: write of the temporary file failed (disk full?)");
        }
        offset += static_cast<std::uint64_t>(got);
    }
    std::vector<std::byte> buffer(std::size_t{32} << 20);
    const double seconds = bestSeconds([&] { readFile(fd, bytes, buffer); });
    ::close(fd);
    return gbPerSecond(bytes, seconds);
}

std::string ratioLine(const char* name, double gbps, double memory, double file)
{
    return std::string(name) + ": " + formatFixed(gbps, 2) + " GB/s (" + formatFixed(gbps / memory, 2) +
           " of memory read, " + formatFixed(gbps / file, 2) + " of file read)";
}

} // namespace

OptionTable perfOptions()
{
    return joinTables(
        {{
             {"size", "GIB", "1", "size of the generated bf16 workload, in (0, 64] GiB"},
             kThreadsOption,
             {"scheme", "S|all", "",
              "also time quantize+pack of S (every product scheme but BF16: all) against W4A16 "
              "(repeatable)"},
             {"rounding", "mse|range|codes", "",
              "also time this method's search + encode on a 16 MiB slice (W4A16; codes: NVFP4A16) "
              "(repeatable)"},
         },
         backendOptionTable(),
         {
             {"forward", "DRAFT", "",
              "instead, time the offline-acceptance forward of DRAFT (BF16 and the default "
              "plan) and its GEMM against a plain sgemm"},
             {"target-model", "PATH", "",
              "with --forward: the target model's checkpoint, for drafts that read its "
              "embeddings or head"},
             {"k", "K", "2", "with --forward: proposals per verify cycle"},
             {"anchors", "N", "64", "with --forward: anchors timed"},
             {"context", "T", "512", "with --forward: tokens of the random capture's sequence"},
             {"per-unit", "", "",
              "with --forward: also time the per-unit sensitivity (acceptance --per-unit) on the same "
              "anchors"},
             kNumericsOption,
             {"target", "PATH", "", "deprecated spelling of --target-model", "target-model"},
         }});
}

int runPerf(const std::vector<std::string>& argv)
{
    const Args args(argv, perfOptions());
    args.expectPositional(0, 0);
    const double gib = args.number("size", 1.0);
    if (!(gib > 0.0) || gib > 64.0) {
        throw UsageError("--size must be in (0, 64] GiB");
    }
    const unsigned threads = resolveThreads(static_cast<int>(args.integer("threads", 0, 0, 4096)));
    if (args.value("forward")) {
        return runForwardPerf(args, threads);
    }
    const auto backend = backendFrom(args);
    const auto rows = std::max<std::size_t>(1, static_cast<std::size_t>(gib * (1ull << 30) / 2 / kCols));
    const std::uint64_t bytes = rows * kCols * 2;
    const QuantScheme scheme{4, 128};

    std::vector<std::uint16_t> data(rows * kCols);
    fillWorkload(data, threads);
    const auto* raw = reinterpret_cast<const std::byte*>(data.data());
    const WeightRows weights{DType::BF16, raw, rows, kCols, 0, "perf.weight"};
    std::cout << "workload: " << formatBytes(bytes) << " bf16 [" << rows << ", " << kCols << "], "
              << scheme.label() << ", " << threads << " threads, SIMD target " << kernels::targetName()
              << "\n";

    volatile std::uint64_t sink = 0;
    const double memory =
        gbPerSecond(bytes, bestSeconds([&] { sink = sink + sumWords(raw, bytes, threads); }));
    std::cout << "memory read: " << formatFixed(memory, 2) << " GB/s\n";
    const double file = measureFileRead(raw, bytes);
    std::cout << "file read (pread, warm cache): " << formatFixed(file, 2) << " GB/s\n";

    const bool cuda = backend->kind() == Backend::Cuda;
    if (cuda) {
        std::cout << "backend: " << backend->description() << "\n";
    }
    const double analyze = gbPerSecond(bytes, bestSeconds([&] {
                                           ErrorStatsAccumulator acc(scheme, rows, kCols);
                                           acc.addRows(weights, threads, backend.get());
                                           sink = sink + acc.result().qHist[0];
                                       }));
    std::cout << ratioLine(cuda ? "analyze (cuda, end to end)" : "analyze", analyze, memory, file) << "\n";

    // The sensitivity sweep: every product scheme on each row while it is in cache (the goal:
    // at most 3x one analyze for all of them).
    std::vector<const WeightScheme*> sweepSchemes;
    std::vector<SchemeContext> sweepContexts;
    const float absmax = weightAbsmax(weights);
    for (const auto& s : weightSchemes()) {
        if (s.product && s.quantizes()) {
            sweepSchemes.push_back(&s);
            sweepContexts.push_back(s.codec()->contextForAbsmax(DType::BF16, absmax));
        }
    }
    const double sweep = gbPerSecond(bytes, bestSeconds([&] {
                                         SchemeSweepAccumulator acc(sweepSchemes, sweepContexts, rows, kCols);
                                         acc.addRows(weights, threads);
                                         sink = sink + static_cast<std::uint64_t>(acc.sqNorm());
                                     }));
    std::cout << ratioLine("sweep", sweep, memory, file) << ", " << sweepSchemes.size()
              << " schemes per pass = " << formatFixed(analyze / sweep, 2) << "x the time of one analyze\n";

    std::vector<std::byte> scales(rows * scheme.groupsPerRow(kCols) * 2);
    std::vector<std::int32_t> packed(rows * scheme.packedWordsPerRow(kCols));
    const double quantize = gbPerSecond(
        bytes,
        bestSeconds([&] { backend->quantizeBlock(weights, scheme, scales.data(), packed.data(), threads); }));
    std::cout << ratioLine(cuda ? "quantize+pack (cuda, end to end)" : "quantize+pack", quantize, memory,
                           file)
              << "; analyze runs at " << formatFixed(analyze / quantize, 2) << "x its speed\n";
    // Every other scheme through its codec (what export runs), against W4A16 in the same run.
    std::vector<const WeightScheme*> others;
    for (const auto& name : args.values("scheme")) {
        if (name == "all") {
            for (const auto& s : weightSchemes()) {
                if (s.product && s.quantizes()) {
                    others.push_back(&s);
                }
            }
        } else if (const auto* s = findWeightScheme(name); s && s->quantizes()) {
            others.push_back(s);
        } else {
            throw UsageError("--scheme '" + name + "': one of " + weightSchemeNames() +
                             " (not BF16), or all");
        }
    }
    for (const auto* s : others) {
        const auto& codec = *s->codec();
        const auto context = codec.contextForAbsmax(DType::BF16, weightAbsmax(weights));
        std::vector<std::vector<std::byte>> parts;
        const double gbps =
            gbPerSecond(bytes, bestSeconds([&] {
                            codec.encode(weights, context, parts, s->cuda ? *backend : cpuBackend(), threads);
                        }));
        std::cout << "quantize+pack " << s->name << ": " << formatFixed(gbps, 2) << " GB/s ("
                  << formatFixed(gbps / quantize, 2) << " of W4A16)\n";
    }
    // Rounding methods that search: the search plus the encode under its result (what export runs), on a
    // slice small enough to finish in seconds, against W4A16 RTN quantize+pack of the same run, both the best
    // of kRepeats. A range search runs on W4A16, a scale-code search on NVFP4A16 (the scheme it applies to).
    for (const auto& name : args.values("rounding")) {
        const auto* method = findRoundingMethod(name);
        if (!method || method->isRtn()) {
            throw UsageError("--rounding '" + name + "': a searching rounding method (mse, range, codes)");
        }
        const auto& measured =
            method->searches() ? *intSymmetricScheme(4, 128) : *findWeightScheme("NVFP4A16");
        WeightRows slice = weights;
        slice.rowCount = std::min<std::size_t>(rows, (std::size_t{16} << 20) / 2 / kCols);
        const std::uint64_t sliceBytes = slice.rowCount * kCols * 2;
        std::vector<std::vector<std::byte>> parts;
        // NVFP4's global scale comes from the slice's absmax, outside the timing like the other schemes'.
        SchemeContext base = measured.codec()->usesGlobalScale()
                                 ? measured.codec()->contextForAbsmax(DType::BF16, weightAbsmax(slice))
                                 : SchemeContext{};
        base.scaleCodeSearch = method->scaleCodeSearch;
        const double gbps =
            gbPerSecond(sliceBytes, bestSeconds([&] {
                            auto context = base;
                            if (method->searches()) {
                                context.ranges = searchRanges(*method, measured, slice, threads);
                            }
                            measured.codec()->encode(slice, context, parts, cpuBackend(), threads);
                        }));
        std::cout << "quantize+pack " << measured.name << " " << method->name << " (search + encode, "
                  << formatBytes(sliceBytes) << " slice): " << formatFixed(gbps, 3) << " GB/s (1/"
                  << formatFixed(quantize / gbps, 0) << " of W4A16 RTN)\n";
    }
    if (cuda) {
        const auto device = cudaKernelBenchmark(weights, scheme, kRepeats);
        std::cout << "cuda kernel quantize+pack: " << formatFixed(device.kernelInputGBs, 1)
                  << " GB/s of weights (" << formatFixed(device.kernelTrafficGBs, 1)
                  << " GB/s traffic = " << formatFixed(device.kernelTrafficGBs / device.copyTrafficGBs, 2)
                  << " of the device copy bandwidth " << formatFixed(device.copyTrafficGBs, 1)
                  << " GB/s, cudaMemcpy device-to-device)\n";
    }
    return kExitOk;
}

} // namespace spark::cli
