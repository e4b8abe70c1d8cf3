#pragma once

#include "core/plan/configreader.h"
#include "core/quant/weightscheme.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace spark {

/// @brief The weight quantization a config group describes, read field by field so that schemes the
/// product does not write (int3, naive-quantized FP8, tensor strategy) are still understood.
struct QuantArgs
{
    std::string type; ///< "int" or "float"
    int bits = 0;     ///< 1 .. 8
    bool symmetric = true;
    std::string strategy;          ///< "group", "channel", "tensor", "tensor_group", "block", "token"
    int groupSize = -1;            ///< weights per scale along a row; -1 when the strategy has no group
    bool actorderGroup = false;    ///< actorder "group": a weight_g_idx tensor is written
    bool inputActivations = false; ///< input_activations is an object
    bool dynamicActivations = false;
    std::string format;           ///< the group's format, else the top-level one (vLLM's fallback)
    bool formatFromGroup = false; ///< the group carries its own format
    /// The product scheme these arguments are, nullptr when none (then the audit still reads the layout).
    const WeightScheme* scheme = nullptr;

    /// "W4A16:g32", or "int3 sym group 128 (pack-quantized)" for a scheme the product does not write.
    std::string describe() const;
    /// @brief Empty when vLLM has a kernel scheme for these arguments and format (schemes-spec §5.2 rules
    /// 5-6, format-spec §2.5, §4.6); otherwise why vLLM cannot serve them.
    std::string vllmProblem() const;
};

/// @brief Where a checkpoint's quantization_config was found and what it says.
struct LocatedQuantConfig
{
    bool present = false;
    /// "quantization_config", "compression_config", "transformer_layer_config.quantization_config"
    std::string location;
    nlohmann::json raw;          ///< the quantization_config object itself (null when absent)
    ReadQuantConfig read;        ///< groups, ignore, top-level format and problems (readQuantizationConfig)
    std::vector<QuantArgs> args; ///< one per read.groups entry
    std::vector<std::string> argProblems; ///< groups whose weights cannot be read (parseQuantArgs)
    /// Placement problems: a speculators-format config whose copies disagree or that has only one.
    std::vector<std::string> placementProblems;
};

/// @brief Finds the quantization_config of a config.json the way vLLM does (top-level
/// `quantization_config`, else `compression_config`), and for speculators-format drafts the copy inside
/// `transformer_layer_config` (llm-compressor writes it there; format-spec §3 "Placement"). Never throws.
LocatedQuantConfig locateQuantizationConfig(const nlohmann::json& config);

/// @brief The QuantArgs of one config group (@p topFormat: the top-level format). Malformed fields leave
/// bits 0 and add a line to @p problems naming @p groupName. Never throws.
QuantArgs parseQuantArgs(const nlohmann::json& group, const std::string& topFormat,
                         const std::string& groupName, std::vector<std::string>& problems);

} // namespace spark
