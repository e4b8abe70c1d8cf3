#pragma once

#include "core/audit/quantargs.h"
#include "core/io/checkpoint.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spark {

/// @brief One thing wrong with how a module is stored: a rule id of the checker and one sentence.
struct LayoutIssue
{
    std::string rule; ///< "tensor-missing", "tensor-shape", "tensor-dtype", "zero-point-symmetric", ...
    std::string message;
};

/// @brief A module's quantized tensors read against the layout of one QuantArgs (format-spec §2.1,
/// schemes-spec §1): its geometry, the weight dtype, the bytes it takes and what does not fit.
struct StoredLayout
{
    std::uint64_t out = 0;
    std::uint64_t in = 0;
    DType weightDtype = DType::BF16; ///< dtype of the dequantized weight: the scales' dtype, else torch_dtype
    std::uint64_t storedBytes = 0;   ///< bytes of every weight tensor of the module (bias excluded)
    bool oldPacking = false;         ///< CT <= 0.17 packing (3/5/6/7 bits: floor(32/bits) values per word)
    std::vector<LayoutIssue> issues;

    /// True when the tensors fit the layout well enough to dequantize them.
    bool decodable() const { return issues.empty() && out > 0 && in > 0; }
};

/// @brief The suffixes (after "P.") a quantized module may store; "weight" only with an integer/FP8 dtype.
bool isQuantizedTensorSuffix(const std::string& suffix);

/// @brief Reads module @p prefix of @p checkpoint against @p args. @p configDtype is the config's
/// torch_dtype (the weight dtype when the scales are FP8). Shapes from a hostile file (weight_shape of
/// 2^60, groups that do not divide) become issues naming the module, never an exception.
StoredLayout readStoredLayout(const Checkpoint& checkpoint, const std::string& prefix, const QuantArgs& args,
                              DType configDtype, int ctMinorVersion);

/// @brief The config's torch_dtype / dtype as a DType (BF16 when absent or not a float type).
DType configWeightDtype(const nlohmann::json& config);

/// @brief The minor version of a compressed-tensors "version" string ("0.12.2" → 12); 18 when unknown.
int compressedTensorsMinor(const nlohmann::json& quantizationConfig);

} // namespace spark
