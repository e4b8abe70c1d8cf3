#pragma once

#include "core/forward/draftforward.h"

#include <cstdint>
#include <filesystem>
#include <string>

namespace spark {

/// @brief The forward's tiled Linear (BF16 weight rows converted to FP32 tile by tile, one GEMM per tile and
/// thread) against a plain GEMM of the same shape on weights already in FP32 (the library's own throughput).
struct GemmBenchmark
{
    std::int64_t m = 0, k = 0, n = 0;
    double tiledGflops = 0;
    double plainGflops = 0;
    std::string target; ///< the GEMM's SIMD level
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

} // namespace spark
