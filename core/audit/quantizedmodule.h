#pragma once

#include "core/audit/moduledecoder.h"
#include "core/audit/quantargs.h"
#include "core/audit/storedlayout.h"
#include "core/io/checkpoint.h"
#include "core/plan/architecture.h"
#include "core/plan/draftmodule.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief One module of a checkpoint someone else may have quantized: how it is stored, what its scheme
/// is, and what vLLM makes of it (format-spec §4.3, schemes-spec §5.1).
struct AuditedModule
{
    /// vLLM's description (vLLM name and class, fused set, raw `.weight` reads, limits). For a quantized
    /// module it is built from the [out, in] weight its tensors describe.
    DraftModule module;
    bool quantizedOnDisk = false; ///< weight_packed / weight_scale / an I8 or F8 .weight is stored
    /// vLLM evaluates it against the config: a Linear or a head with a 2-D weight.
    bool evaluated = false;

    // vLLM's view with the empty packed_modules_mapping drafts get today (vllm#53116) ...
    bool ignored = false;
    int group = -1;          ///< config group vLLM selects, -1 when none (or ignored)
    std::string ignoreError; ///< fused shards disagree: vLLM's ValueError
    // ... and with the standard mapping (after a fix of vllm#53116).
    bool ignoredWithMapping = false;
    int groupWithMapping = -1;
    // compressed-tensors / transformers apply the config to the checkpoint's own (shard) name.
    bool shardIgnored = false;
    int shardGroup = -1;

    /// The group whose layout the stored tensors were read against (the selected one, else the first that
    /// fits); -1 for BF16 modules or when no group fits.
    int layoutGroup = -1;
    StoredLayout layout; ///< quantized modules only
    const WeightScheme* productScheme =
        nullptr; ///< the product scheme it is stored as (BF16 when not quantized)
    /// The rounding its config group's observer records (roundingOfWeights()); nullptr when not quantized,
    /// without a group, or for an observer Sparkulator does not recompute.
    const RoundingMethod* rounding = nullptr;
    bool gptq = false;  ///< its config group marks GPTQ codes (ConfigGroup::gptq): not recomputable
    std::string scheme; ///< "W4A16", "BF16", "int3 sym group 128 (pack-quantized)"
    std::uint64_t weightBytes = 0; ///< bytes of the weight's tensors (bias excluded)
    double bitsPerWeight = 0;      ///< weightBytes · 8 / (out · in); 0 when unknown

    /// True when vLLM loads it quantized (empty mapping).
    bool vllmQuantizes() const { return evaluated && !ignored && group >= 0; }
    bool decodable() const { return quantizedOnDisk && layoutGroup >= 0 && layout.decodable(); }
};

/// @brief A quantized (or BF16) checkpoint as the audit sees it.
struct QuantizedCheckpoint
{
    ArchitectureInfo architecture;
    int targetLayers = 0;
    bool targetLayersKnown = false;
    LocatedQuantConfig config;
    int ctMinorVersion = 18;
    DType configDtype = DType::BF16;
    std::vector<AuditedModule> modules; ///< every checkpoint module, sorted by name

    const AuditedModule* find(std::string_view moduleName) const;
    /// The module a tensor belongs to, nullptr when none.
    const AuditedModule* moduleOfTensorName(const std::string& tensorName) const;
};

/// @brief Recognises every module of @p checkpoint from its tensors and config.json (no tensor data is
/// read beyond weight_shape). @p targetLayers overrides the config's target layer count. Never throws for a
/// hostile config or hostile shapes: they become layout issues naming the module.
QuantizedCheckpoint recogniseCheckpoint(const Checkpoint& checkpoint,
                                        std::optional<int> targetLayers = std::nullopt);

/// @brief A lazy dequantizer of a quantized module (nullptr when it is not decodable).
std::unique_ptr<ModuleDecoder> makeDecoder(const Checkpoint& checkpoint, const QuantizedCheckpoint& view,
                                           const AuditedModule& module);

/// @brief Rows of @p module as floats: its dequantization when quantized, the stored values when
/// BF16/F16/F32. For histograms and error figures. Throws IoError / std::invalid_argument naming the module.
std::vector<float> moduleWeightValues(const Checkpoint& checkpoint, const QuantizedCheckpoint& view,
                                      const AuditedModule& module, std::uint64_t firstRow,
                                      std::size_t rowCount);

} // namespace spark
