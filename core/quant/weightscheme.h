#pragma once

#include "core/io/dtype.h"
#include "core/quant/quantscheme.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

class SchemeCodec;

/// @brief How a scheme encodes weights (schemes-spec §3); the codec of each family does the arithmetic.
enum class SchemeFamily {
    Keep,          ///< BF16: the weight is copied unchanged
    IntSymmetric,  ///< W4A16 / W8A16 (any group): pack-quantized, no zero point
    IntAsymmetric, ///< W4A16_ASYM: pack-quantized with packed zero points
    Fp8,           ///< FP8_DYNAMIC: float-quantized e4m3 weights, per-channel scales
    Nvfp4,         ///< NVFP4A16: nvfp4-pack-quantized, FP8 group-16 scales, an FP32 global scale
};

/// @brief Which vLLM kernel serves a scheme on a GPU generation (schemes-spec §6.2, read not run).
struct KernelSupport
{
    std::string_view sm90;  ///< H100 / H200
    std::string_view sm121; ///< GB10 / DGX Spark, RTX 50
};

/// @brief One product scheme, described once: its name, arithmetic parameters, compressed-tensors config
/// group, on-disk tensors (through its codec), shape gate and kernels. Everything that handles schemes
/// (planner, exporter, verifier, analyzer, CLI, GUI) iterates over weightSchemes() or asks the scheme,
/// instead of branching on names.
struct WeightScheme
{
    std::string_view name; ///< "W4A16", "W4A16:g32", "W8A16:channel", "FP8_DYNAMIC", "BF16", ...
    SchemeFamily family = SchemeFamily::Keep;
    int bits = 16;            ///< bits of a stored weight value
    int groupSize = -1;       ///< weights per scale along a row; -1: one scale per row (channel)
    std::string_view format;  ///< per-group compressed-tensors format ("" for BF16)
    std::string_view summary; ///< one line for tooltips and --help
    KernelSupport kernels;
    bool cuda = false;   ///< the CUDA backend serves it (the CPU serves every scheme)
    bool product = true; ///< listed for users (W8A16:g32/g64 are accepted but not offered)

    bool quantizes() const { return family != SchemeFamily::Keep; }
    /// @brief The int parameters of IntSymmetric schemes (the SIMD and CUDA kernels take them).
    QuantScheme intScheme() const { return {bits, groupSize}; }
    /// @brief Bits per weight as stored, scales included (for a [out, in] weight of @p dtype; 16 for BF16).
    double bitsPerWeight(std::uint64_t out, std::uint64_t in, DType dtype) const;
    /// @brief Bytes of every tensor the scheme writes for a [out, in] weight of @p dtype (the weight's own
    /// bytes for BF16).
    std::uint64_t quantizedBytes(std::uint64_t out, std::uint64_t in, DType dtype) const;
    /// @brief Empty when vLLM can serve a [out, in] weight with this scheme on every kernel it may pick
    /// (in % 128, out % 64 per tensor-parallel rank, the group divides in); otherwise the reason.
    std::string shapeProblem(std::uint64_t out, std::uint64_t in, TensorSplit split, int tpDegree) const;
    /// @brief The `weights` object of the config group (schemes-spec §4.1; no scale_dtype/zp_dtype).
    nlohmann::json weightsConfig() const;
    /// @brief The `input_activations` object (FP8_DYNAMIC: dynamic per-token FP8), else null.
    nlohmann::json inputActivationsConfig() const;
    /// @brief The arithmetic; nullptr for BF16.
    const SchemeCodec* codec() const;
};

/// @brief Every scheme, product schemes first in the order users see them, then BF16.
const std::vector<WeightScheme>& weightSchemes();
/// @brief The scheme called @p name (case-insensitive; "W4A16:g128" is W4A16), nullptr when unknown.
const WeightScheme* findWeightScheme(std::string_view name);
/// @brief The BF16 (keep) scheme.
const WeightScheme& keepScheme();
/// @brief The IntSymmetric scheme with these bits and group (--bits/--group), nullptr when none.
const WeightScheme* intSymmetricScheme(int bits, int groupSize);
/// @brief "W4A16, W4A16:g32, ..., BF16" (product schemes) for usage and error messages.
std::string weightSchemeNames();

} // namespace spark
