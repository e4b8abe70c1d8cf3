#pragma once

// Quantization from a capture: the BF16 draft runs over captured target hidden states while the input
// Hessian XᵀX of every module that needs one is accumulated. GPTQ (rounding.md §2) then solves the codes of
// the integer modules under the ranges their rounding method chose, and the `hessian` rounding
// (rounding.md §6) chooses its modules' ranges by each group's block of H. Solved weights go to a temporary
// safetensors folder that the exporter encodes from, with the chosen ranges.

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

/// @brief Options of calibrateFromCapture().
struct CalibrationOptions
{
    /// Solve the codes of every module with an integer scheme by GPTQ; false: only the modules whose
    /// rounding needsHessian() are calibrated (their ranges; RTN codes under them).
    bool gptq = true;
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

/// @brief How one calibrated module did.
struct CalibratedModuleReport
{
    std::string name;
    std::int64_t tokens = 0;   ///< input rows its Hessian saw (every slice)
    double outputError = 0;    ///< ‖(W−Q)X‖²/‖WX‖² over the capture, Q the codes exported
    double rtnOutputError = 0; ///< the same for RTN codes under the same scales (outputError without GPTQ)
    bool gptq = false;         ///< GPTQ solved the codes
    bool fellBack = false;     ///< Cholesky failed: RTN codes (fp32 quotient)
};

/// @brief The ranges and solved weights of every calibrated module, ready for ExportOptions::calibrated.
/// Owns the temporary folder beside the export's output; it is removed with the object.
class CaptureCalibration
{
  public:
    CaptureCalibration(const std::filesystem::path& output, const std::filesystem::path& source);

    const CalibratedWeights& weights() const { return m_weights; }
    const std::vector<CalibratedModuleReport>& modules() const { return m_modules; }
    /// Quantized modules left to their rounding method: their scheme has no GPTQ (FP8, NVFP4), with gptq.
    const std::vector<std::string>& skipped() const { return m_skipped; }
    std::int64_t samples() const { return m_samples; }
    std::int64_t anchors() const { return m_anchors; }
    std::int64_t passes() const { return m_passes; }
    double hessianSeconds() const { return m_hessianSeconds; }
    double solveSeconds() const { return m_solveSeconds; }
    /// "GPTQ on 5 modules from 4 sequences (120 anchors, 1 pass): mean output error 0.0112 (RTN 0.0151),
    /// Hessians 1.2 s, solve 0.8 s" ("Calibrated 5 modules ..." without GPTQ): the relative output errors
    /// averaged over modules.
    std::string summary() const;

  private:
    friend CaptureCalibration calibrateFromCapture(const std::shared_ptr<const Checkpoint>&, QuantPlan&,
                                                   const std::filesystem::path&, const CalibrationOptions&);
    std::unique_ptr<StagingDirectory> m_temp;
    CalibratedWeights m_weights;
    std::vector<CalibratedModuleReport> m_modules;
    std::vector<std::string> m_skipped;
    std::int64_t m_samples = 0, m_anchors = 0, m_passes = 0;
    double m_hessianSeconds = 0, m_solveSeconds = 0;
};

/// @brief Whether exporting @p plan needs a capture: a quantized module's rounding needsHessian().
bool planNeedsCapture(const QuantPlan& plan);

/// @brief Calibrates @p plan's modules on a capture: with options.gptq, GPTQ on every quantized module
/// whose scheme it supports (gptqSupports(); their config groups marked ConfigGroup::gptq); and the ranges
/// of every module whose rounding needsHessian(). Throws ForwardInputError/IoError naming the file when the
/// capture does not fit the draft, and ExportError naming the module when no captured input reaches it, a
/// weight is not finite, or there is nothing to calibrate. @p output: the export's destination (the
/// temporary folder goes beside it).
CaptureCalibration calibrateFromCapture(const std::shared_ptr<const Checkpoint>& source, QuantPlan& plan,
                                        const std::filesystem::path& output,
                                        const CalibrationOptions& options);

} // namespace spark
