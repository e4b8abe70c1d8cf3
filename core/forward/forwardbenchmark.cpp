#include "core/forward/forwardbenchmark.h"

#include "core/forward/acceptancejob.h"
#include "core/forward/blocks.h"
#include "core/forward/capturewriter.h"
#include "core/forward/gemm.h"
#include "core/io/floatconv.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unistd.h>

namespace spark {
namespace {

/// A BF16 weight held in memory, as the forward reads a checkpoint's.
class MemoryLinear final : public LinearSource
{
  public:
    MemoryLinear(std::vector<std::uint16_t> bits, std::int64_t rows, std::int64_t cols)
        : m_bits(std::move(bits)), m_rows(rows), m_cols(cols)
    {
    }
    std::int64_t rows() const override { return m_rows; }
    std::int64_t cols() const override { return m_cols; }
    void decode(std::int64_t firstRow, std::size_t rowCount, float* out) const override
    {
        toFloat(DType::BF16, reinterpret_cast<const std::byte*>(m_bits.data() + firstRow * m_cols),
                rowCount * static_cast<std::size_t>(m_cols), out);
    }
    const std::uint16_t* storedBf16(std::int64_t firstRow) const override
    {
        return m_bits.data() + firstRow * m_cols;
    }
    std::string describe() const override { return "benchmark weight"; }

  private:
    std::vector<std::uint16_t> m_bits;
    std::int64_t m_rows, m_cols;
};

template <typename F> double bestSeconds(int reps, F&& f)
{
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
        const auto start = std::chrono::steady_clock::now();
        f();
        best =
            std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return best;
}

std::uint64_t next(std::uint64_t& state)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
}

} // namespace

GemmBenchmark benchmarkGemm(std::int64_t m, std::int64_t k, std::int64_t n, unsigned threads, int reps)
{
    std::uint64_t state = 1;
    std::vector<std::uint16_t> bits(static_cast<std::size_t>(n * k));
    for (auto& b : bits) {
        b = floatToBf16(static_cast<float>(static_cast<double>(next(state) % 2001) / 1000.0 - 1.0) * 0.02f);
    }
    std::vector<float> weights(bits.size());
    toFloat(DType::BF16, reinterpret_cast<const std::byte*>(bits.data()), bits.size(), weights.data());
    Activations x(m, k);
    for (auto& v : x.values) {
        v = static_cast<float>(next(state) % 2001) / 1000.0f - 1.0f;
    }
    const MemoryLinear source(std::move(bits), n, k);
    const unsigned t = resolveThreads(static_cast<int>(threads));
    GemmBenchmark out{m, k, n, 0, 0, 0, std::string(gemm::target()), std::string(gemm::bf16Target())};
    const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
    out.tiledGflops = flops / bestSeconds(reps, [&] { (void)linear(source, x, t); }) / 1e9;
    out.bf16Gflops = flops / bestSeconds(reps, [&] { (void)linearBf16(source, x, t); }) / 1e9;
    std::vector<float> y(static_cast<std::size_t>(m * n));
    out.plainGflops =
        flops /
        bestSeconds(reps,
                    [&] {
                        // One contiguous slice of output columns per thread: the library alone.
                        parallelFor(t, 1, t, [&](std::size_t begin, std::size_t end) {
                            for (std::size_t i = begin; i < end; ++i) {
                                const std::int64_t first = n * static_cast<std::int64_t>(i) / t;
                                const std::int64_t last = n * static_cast<std::int64_t>(i + 1) / t;
                                gemm::multiplyTransposed(x.values.data(), m, k, weights.data() + first * k,
                                                         last - first, y.data() + first, n);
                            }
                        });
                    }) /
        1e9;
    // Each BF16 kernel on tiles of 64 weight rows, as linearBf16 hands them out, the weights already BF16.
    const gemm::Bf16Blocks xs(x.values.data(), m, k);
    const std::int64_t tile = 64;
    for (const auto& kernel : gemm::bf16Kernels()) {
        const double seconds = bestSeconds(reps, [&] {
            parallelFor(static_cast<std::size_t>((n + tile - 1) / tile), 1, t,
                        [&](std::size_t begin, std::size_t end) {
                            for (auto i = static_cast<std::int64_t>(begin);
                                 i < static_cast<std::int64_t>(end); ++i) {
                                kernel.multiply(xs, source.storedBf16(i * tile), std::min(tile, n - i * tile),
                                                y.data() + i * tile, n);
                            }
                        });
        });
        out.bf16KernelGflops.emplace_back(kernel.name, flops / seconds / 1e9);
    }
    return out;
}

namespace {

/// A random greedy capture for @p draft in a temporary folder (removed with it): one sequence whose last
/// @p anchors positions are the anchors.
class RandomCapture
{
  public:
    RandomCapture(const DraftSpec& spec, int k, std::int64_t anchors, std::int64_t contextTokens)
        : m_folder(std::filesystem::temp_directory_path() /
                   ("sparkulator-perf-" + std::to_string(::getpid())))
    {
        const std::int64_t length = contextTokens + anchors + k + 1;
        const auto layers = static_cast<std::uint64_t>(spec.auxLayerIds.size());
        std::uint64_t state = 7;
        std::vector<std::uint16_t> hidden(static_cast<std::size_t>(length) * layers *
                                          static_cast<std::uint64_t>(spec.targetHidden));
        for (auto& h : hidden) {
            h = floatToBf16(static_cast<float>(next(state) % 2001) / 1000.0f - 1.0f);
        }
        std::vector<std::int32_t> tokens(static_cast<std::size_t>(length));
        for (auto& t : tokens) {
            t = static_cast<std::int32_t>(next(state) % static_cast<std::uint64_t>(spec.vocab));
        }
        std::vector<std::uint8_t> mask(static_cast<std::size_t>(length), 0);
        std::fill(mask.begin() + contextTokens, mask.end(), 1);
        std::filesystem::create_directories(m_folder);
        writeCaptureFile(file(), {std::move(hidden),
                                  spec.auxLayerIds,
                                  static_cast<std::uint64_t>(spec.targetHidden),
                                  std::move(tokens),
                                  {0, length},
                                  std::move(mask),
                                  {{"greedy", "true"}}});
    }
    ~RandomCapture()
    {
        std::error_code ignored;
        std::filesystem::remove_all(m_folder, ignored);
    }
    RandomCapture(const RandomCapture&) = delete;
    RandomCapture& operator=(const RandomCapture&) = delete;
    std::filesystem::path file() const { return m_folder / "capture.safetensors"; }

  private:
    std::filesystem::path m_folder;
};

/// What both benchmarks run: BF16 against the default plan in memory, every anchor in one batch, on a random
/// capture for the draft.
struct BenchmarkSetup
{
    DraftSpec spec;
    RandomCapture capture;
    AcceptanceJob job;

    BenchmarkSetup(const std::filesystem::path& draft, const std::filesystem::path& target, int k,
                   std::int64_t anchors, std::int64_t contextTokens, unsigned threads,
                   ForwardNumerics numerics)
        : spec(readDraftSpec(Checkpoint::open(draft))), capture(spec, k, anchors, contextTokens)
    {
        job.draft = draft;
        job.capture = capture.file();
        job.target = target;
        job.plan = PlanOptions{};
        job.options.k = k;
        job.options.anchorCount = anchors;
        job.options.threads = threads;
        job.options.batchAnchors = anchors;
        job.numerics = numerics;
    }
};

} // namespace

AcceptanceBenchmark benchmarkAcceptance(const std::filesystem::path& draft,
                                        const std::filesystem::path& target, int k, std::int64_t anchors,
                                        std::int64_t contextTokens, unsigned threads,
                                        ForwardNumerics numerics)
{
    const BenchmarkSetup setup(draft, target, k, anchors, contextTokens, threads, numerics);
    AcceptanceBenchmark out{setup.spec.archId, anchors, k, 0, 0};
    out.seconds = bestSeconds(1, [&] { out.anchors = runAcceptance(setup.job).summary.anchors; });
    out.anchorsPerMinute = 60.0 * static_cast<double>(out.anchors) / out.seconds;
    return out;
}

SensitivityBenchmark benchmarkSensitivity(const std::filesystem::path& draft,
                                          const std::filesystem::path& target, int k, std::int64_t anchors,
                                          std::int64_t contextTokens, unsigned threads,
                                          ForwardNumerics numerics)
{
    const BenchmarkSetup setup(draft, target, k, anchors, contextTokens, threads, numerics);
    SensitivityBenchmark out;
    out.anchors = anchors;
    out.seconds =
        bestSeconds(1, [&] { out.units = static_cast<std::int64_t>(runSensitivity(setup.job).size()); });
    return out;
}

} // namespace spark
