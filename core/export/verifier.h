#pragma once

#include "core/io/checkpoint.h"
#include "core/progress.h"
#include "core/quant/quantbackend.h"

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief One failed invariant, naming the tensor or module concerned.
struct VerifyProblem
{
    std::string subject; ///< tensor, module or file
    std::string message;
};

/// @brief Options of verifyExport().
struct VerifyOptions
{
    unsigned threads = 0;            ///< 0: all cores
    std::optional<int> targetLayers; ///< the offset the export was planned with, when config.json lacks it
    ProgressFn progress;             ///< source bytes checked / total
    const QuantBackend* backend = nullptr; ///< where the recomputation runs; nullptr: the CPU
};

/// @brief The outcome of verifyExport().
struct VerifyReport
{
    std::size_t bitExactModules =
        0; ///< quantized modules whose packed words and scales equal a recomputation
    /// GPTQ modules (ConfigGroup::gptq) whose scales and zero points equal a recomputation; their codes
    /// depend on the capture, so only their tensors' dtypes and shapes are checked.
    std::size_t gptqModules = 0;
    /// Modules whose scales a capture chose (RoundingMethod::needsHessian, without GPTQ): each group's
    /// scale is one of the method's candidates and the codes equal RTN under it.
    std::size_t capturedScaleModules = 0;
    std::size_t copiedTensors = 0; ///< tensors byte-identical to the source
    std::vector<VerifyProblem> problems;

    bool ok() const { return problems.empty(); }
    /// "verify: 35 modules bit-exact, 29 tensors copied, 0 problems" (GPTQ and capture-chosen scales
    /// counted apart)
    std::string summary() const;
};

/// @brief Re-opens @p output (every safetensors invariant of format-spec §1.3 is checked by opening it) and
/// checks it against @p source: quantization_config is well formed (one group per scheme, each with its
/// format, the top-level format, no scale_dtype/zp_dtype); every quantized module gets a scheme from vLLM's
/// group selection (with and without packed_modules_mapping), holds exactly that scheme's tensors (dtypes,
/// shapes, no leftover `.weight`, zero point or g_idx) and they equal a fresh quantization of the source
/// weight under that scheme and the rounding method its group's observer records (roundingOfWeights():
/// the search is redone; NVFP4: with its fused set's global scale); every other source tensor is present
/// and byte-identical; nothing else is present; `__metadata__.format` is "pt"; the index total_size is the
/// sum of data bytes; the `ignore` list, evaluated with vLLM's semantics on the vLLM module names, ignores
/// exactly the Linears left BF16 and splits no fused group. Reads the source in row chunks (bounded memory).
VerifyReport verifyExport(const Checkpoint& source, const Checkpoint& output,
                          const VerifyOptions& options = {});

} // namespace spark
