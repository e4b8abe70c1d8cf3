#pragma once

#include "core/forward/draftforward.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace spark {

/// @brief The forward's tiled Linear (BF16 weight rows converted to FP32 tile by tile, one GEMM per tile and
/// thread) against a plain GEMM of the same shape on weights already in FP32 (the library's own throughput),
/// and the serving numerics' Linear (BF16 operands, FP32 sums) on the same shape.
struct GemmBenchmark
{
    std::int64_t m = 0, k = 0, n = 0;
    double tiledGflops = 0;
    double plainGflops = 0;
    double bf16Gflops = 0;
    std::string target;     ///< the FP32 GEMM's SIMD level
    std::string bf16Target; ///< where the BF16 GEMM runs
    /// Each BF16 kernel this machine runs on the same shape, the weights already BF16 in memory.
    std::vector<std::pair<std::string, double>> bf16KernelGflops;
};

/// @brief Best of @p reps runs of both, on @p threads threads.
GemmBenchmark benchmarkGemm(std::int64_t m, std::int64_t k, std::int64_t n, unsigned threads, int reps = 3);

/// @brief Offline-acceptance throughput on a draft: a random capture (written to a temporary folder, removed
/// afterwards) of @p anchors anchors in one sequence of @p contextTokens tokens, evaluated paired for the
/// BF16 draft and its default plan applied in memory.
struct AcceptanceBenchmark
{
    std::string architecture;
    std::int64_t anchors = 0;
    int k = 0;
    double seconds = 0;
    double anchorsPerMinute = 0; ///< both drafts
};

AcceptanceBenchmark benchmarkAcceptance(const std::filesystem::path& draft,
                                        const std::filesystem::path& target, int k, std::int64_t anchors,
                                        std::int64_t contextTokens, unsigned threads,
                                        ForwardNumerics numerics = ForwardNumerics::Fp32);

/// @brief The per-unit sensitivity (`acceptance --per-unit`: the BF16 draft once, then each unit of the
/// default plan quantized alone) on a random capture like benchmarkAcceptance()'s.
struct SensitivityBenchmark
{
    std::int64_t anchors = 0;
    std::int64_t units = 0;
    double seconds = 0;
};

SensitivityBenchmark benchmarkSensitivity(const std::filesystem::path& draft,
                                          const std::filesystem::path& target, int k, std::int64_t anchors,
                                          std::int64_t contextTokens, unsigned threads,
                                          ForwardNumerics numerics = ForwardNumerics::Fp32);

} // namespace spark
