#pragma once

// GPTQ from a capture (rounding.md §2): the BF16 draft runs over captured target hidden states while every
// quantized Linear's input Hessian XᵀX is accumulated, then llm-compressor's solver rounds each module under
// the ranges its rounding method chose on the original weight. The solved weights go to a temporary
// safetensors folder that the exporter encodes from; the scales stay those of the original weight, so
// only the codes differ from an RTN export.

#include "core/export/exporter.h"
#include "core/forward/hiddenstatecapture.h"
#include "core/io/stagingdirectory.h"
#include "core/plan/quantplan.h"
#include "core/progress.h"
#include "core/quant/gptq.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace spark {

/// @brief Options of calibrateGptq().
struct GptqCalibrationOptions
{
    std::filesystem::path capture;          ///< capture file or folder of per-sequence files
    CaptureReadOptions captureOptions;      ///< layer ids and prompt length the capture does not record
    std::filesystem::path target;           ///< empty: the draft ships every tensor its forward reads
    std::int64_t samples = 0;               ///< captured sequences used (0: all)
    int k = 2;                              ///< draft steps unrolled per anchor (the serving k)
    std::uint64_t memoryBytes = 8ull << 30; ///< FP64 Hessians held at once; more modules take more passes
    GptqOptions solver;
    unsigned threads = 0; ///< 0: all cores
    /// Anchors run / total over every capture pass (the solves between passes report no progress but honour
    /// a cancel); false cancels (IoError Cancelled).
    ProgressFn progress;
};

/// @brief How GPTQ did on one module.
struct GptqModuleReport
{
    std::string name;
    std::int64_t tokens = 0;   ///< input rows its Hessian saw (every slice)
    double outputError = 0;    ///< ‖(W−Q)X‖²/‖WX‖² over the capture
    double rtnOutputError = 0; ///< the same for RTN codes under the same scales
    bool fellBack = false;     ///< Cholesky failed: RTN codes (fp32 quotient)
};

/// @brief The solved weights of every module GPTQ rounds, ready for ExportOptions::calibrated. Owns the
/// temporary folder beside the export's output; it is removed with the object.
class GptqCalibration
{
  public:
    GptqCalibration(const std::filesystem::path& output, const std::filesystem::path& source);

    const CalibratedWeights& weights() const { return m_weights; }
    const std::vector<GptqModuleReport>& modules() const { return m_modules; }
    /// Quantized modules left to their rounding method: their scheme has no GPTQ (FP8, NVFP4).
    const std::vector<std::string>& skipped() const { return m_skipped; }
    std::int64_t samples() const { return m_samples; }
    std::int64_t anchors() const { return m_anchors; }
    std::int64_t passes() const { return m_passes; }
    double hessianSeconds() const { return m_hessianSeconds; }
    double solveSeconds() const { return m_solveSeconds; }
    /// "GPTQ on 5 modules from 4 sequences (120 anchors, 1 pass): mean output error 0.0112 (RTN 0.0151),
    /// Hessians 1.2 s, solve 0.8 s": the relative output errors averaged over modules.
    std::string summary() const;

  private:
    friend GptqCalibration calibrateGptq(const std::shared_ptr<const Checkpoint>&, QuantPlan&,
                                         const std::filesystem::path&, const GptqCalibrationOptions&);
    std::unique_ptr<StagingDirectory> m_temp;
    CalibratedWeights m_weights;
    std::vector<GptqModuleReport> m_modules;
    std::vector<std::string> m_skipped;
    std::int64_t m_samples = 0, m_anchors = 0, m_passes = 0;
    double m_hessianSeconds = 0, m_solveSeconds = 0;
};

/// @brief Runs GPTQ on every quantized module of @p plan whose scheme it supports (gptqSupports()) and marks
/// their config groups (ConfigGroup::gptq). Throws ForwardInputError/IoError naming the file when the
/// capture does not fit the draft, and ExportError naming the module when no captured input reaches it or a
/// weight is not finite. @p output: the export's destination (the temporary folder goes beside it).
GptqCalibration calibrateGptq(const std::shared_ptr<const Checkpoint>& source, QuantPlan& plan,
                              const std::filesystem::path& output, const GptqCalibrationOptions& options);

} // namespace spark
