#pragma once

#include "core/audit/quantizedmodule.h"
#include "core/io/checkpoint.h"
#include "core/progress.h"
#include "core/quant/quantbackend.h"

#include <optional>
#include <string>
#include <vector>

namespace spark {

/// @brief Whether a quantized module is what compressed-tensors computes from the source.
enum class BitExactness {
    Yes,        ///< every tensor equals a fresh quantization of the source under the module's scheme
    No,         ///< a tensor differs (detail says which, from which row)
    NotChecked, ///< a scheme the product cannot encode (int3, naive FP8, ...) or a weight it cannot read
};

/// @brief "yes", "no", "n/a".
std::string_view bitExactnessName(BitExactness value);

/// @brief One module of a source/output pair.
struct ModuleComparison
{
    std::string module;
    std::string sourceScheme; ///< "BF16" for a BF16 source
    std::string outputScheme; ///< "W4A16", "BF16", "int3 sym group 128 (pack-quantized)"
    bool quantizedInSource = false;
    bool quantizedInOutput = false;
    std::uint64_t sourceBytes = 0; ///< bytes of the weight's tensors
    std::uint64_t outputBytes = 0;
    double outputBitsPerWeight = 0;
    std::optional<double> relErr; ///< ||W − D||_F / ||W||_F (float64); absent when D is not finite or W = 0
    std::optional<double> maxAbsErr;                  ///< max |W − D|
    std::uint64_t nonFinite = 0;                      ///< elements of D that are ±Inf/NaN
    BitExactness bitExact = BitExactness::NotChecked; ///< quantized modules only
    std::string rounding; ///< the output's rounding method ("rtn", "mse", "range"); empty when unknown/BF16
    std::string detail;   ///< why not bit-exact / not checked, or why it could not be compared
    bool inSource = true; ///< false: the output has a module the source lacks (nothing was compared)
    /// Tensors of this module that should be byte-identical copies of the source but differ (a BF16
    /// weight, a bias); each is in CompareReport::differingTensors too.
    std::vector<std::string> differingCopies;
};

/// @brief Options of compareCheckpoints().
struct CompareOptions
{
    std::optional<int> targetLayers;
    unsigned threads = 0;                  ///< 0: every core
    const QuantBackend* backend = nullptr; ///< re-encoding runs here; nullptr: the CPU
    ProgressFn progress;                   ///< source weight bytes compared / total
};

/// @brief The outcome of compareCheckpoints().
struct CompareReport
{
    std::vector<ModuleComparison> modules; ///< every module with a 2-D weight, by name
    std::vector<std::string>
        differingTensors; ///< tensors that should be copies but differ (dtype, shape, bytes)
    std::vector<std::string> missingTensors; ///< source tensors the output lacks (quantized weights excepted)
    std::vector<std::string> extraTensors;   ///< output tensors that are neither copies nor a module's scheme
    std::vector<std::string> quantizedOnlyInSource; ///< modules
    std::vector<std::string> quantizedOnlyInOutput; ///< modules

    std::size_t quantizedModules() const;
    std::size_t bitExactModules() const;
    /// True when every quantized module is bit-exact or not checkable and every copy is identical.
    bool ok() const;
    /// "compare: 28 quantized modules, 28 bit-exact; 12 tensors copied identically; 0 differ"
    std::string summary() const;
};

/// @brief Pairs a (BF16) source with a quantized output of it: per module its schemes, bytes, the relative
/// error of the output's dequantization against the source, and whether it is bit-exact with the
/// compressed-tensors arithmetic of its scheme and the rounding its config group records, the search redone
/// (verifyExport() is the strict form). Streams row blocks, so
/// memory stays bounded. Throws IoError on a read failure or cancel, and std::invalid_argument naming both
/// folders when @p output is not a quantization of @p source: their config.json name different draft
/// architectures, or no module of the output matches a source module by name and weight shape.
CompareReport compareCheckpoints(const Checkpoint& source, const Checkpoint& output,
                                 const CompareOptions& options = {});

} // namespace spark
