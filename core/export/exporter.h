#pragma once

#include "core/io/checkpoint.h"
#include "core/plan/quantplan.h"
#include "core/progress.h"
#include "core/quant/quantbackend.h"
#include "core/quant/schemecodec.h"

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace spark {

/// @brief Weights that replace the source's before encoding (GPTQ, the hessian rounding:
/// capturecalibration.h): each module named here is encoded from the tensor of the same name in its file,
/// under its context (the ranges chosen on the original weight), instead of from the source.
struct CalibratedWeights
{
    struct Module
    {
        std::shared_ptr<const Checkpoint> file;
        SchemeContext context;
    };
    std::map<std::string, Module> modules; ///< by module name
};

/// @brief Options of exportCheckpoint().
struct ExportOptions
{
    std::filesystem::path output;    ///< created whole or not at all; must not be inside the source
    std::uint64_t maxShardBytes = 0; ///< 0: a single model.safetensors
    unsigned threads = 0;            ///< 0: all cores
    ProgressFn progress;             ///< bytes of output tensor data written / total
    std::string modelCard;           ///< README.md of the output; empty: the source README (if any) is copied
    const QuantBackend* backend = nullptr;         ///< where quantization runs; nullptr: the CPU
    const CalibratedWeights* calibrated = nullptr; ///< modules encoded from solved weights (GPTQ)
};

/// @brief What an export wrote.
struct ExportResult
{
    std::size_t quantizedModules = 0;
    std::size_t copiedTensors = 0;
    std::uint64_t bytesBefore = 0; ///< tensor data bytes of the source
    std::uint64_t bytesAfter = 0;  ///< tensor data bytes of the output
    std::vector<std::string> shardFiles;
    std::vector<std::string> otherFiles; ///< tokenizer, generation config, ... copied verbatim
};

/// @brief Thrown when a plan cannot be exported (plan errors, a planned weight that is missing or not a
/// 2-D BF16/F16/F32 tensor, a NaN/Inf weight met by a rounding search or NVFP4's absmax: the message names
/// file and tensor). IoError and QuantError (from encoding) pass through unchanged.
class ExportError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// @brief Writes the compressed-tensors `pack-quantized` checkpoint of @p plan (format-spec §7): per
/// quantized Linear exactly weight_packed / weight_scale / weight_shape, every other tensor byte-identical,
/// config.json with quantization_config, the folder's other files copied. A module whose rounding method
/// searches (PlannedModule::rounding) is first searched (moduleContexts()), then encoded under the ranges;
/// a calibrated module is encoded from its solved weight instead. Streams shard by shard and tensor by
/// tensor through fixed-size row chunks read with pread, so memory is bounded by the chunk size, not the
/// checkpoint. Atomic: a staging folder beside the output is renamed into place at the end; on error or
/// cancel nothing is left behind and the source is never written to.
ExportResult exportCheckpoint(const Checkpoint& source, const QuantPlan& plan, const ExportOptions& options);

} // namespace spark
