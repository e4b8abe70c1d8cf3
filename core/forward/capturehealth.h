#pragma once

#include "core/forward/hiddenstatecapture.h"
#include "core/progress.h"

#include <cstdint>
#include <string>
#include <vector>

namespace spark {

/// @brief One defect of a capture, named by file, sample and field.
struct CaptureFinding
{
    enum class Severity { Warning, Error };
    Severity severity = Severity::Warning;
    std::string check; ///< "non-finite", "all-zero", "zero-rows", "constant-rows", "post-norm"
    std::string file;
    std::int64_t sample = -1; ///< -1: the capture as a whole
    std::string field;        ///< "hidden_states[layer 3]"
    std::string message;
};

/// @brief What checking a capture's hidden states found.
struct CaptureHealth
{
    std::vector<CaptureFinding> findings;
    std::int64_t samples = 0, rows = 0; ///< what was read
    bool hasErrors() const;
};

/// @brief Reads the samples of @p capture (one at a time, so memory stays that of one sample) and checks
/// each captured layer's rows: a NaN or Inf value (error: the draft's forward would turn it into noise), a
/// sample whose rows of a layer are all zero (error: vLLM's hidden-state extraction wrote all-zero states
/// for hybrid verifiers until vllm#46301, and a draft fed zeros accepts almost nothing), some all-zero rows
/// (warning), rows whose values are all equal but not zero (warning). One finding per sample, layer and
/// check. @p samples: the samples to read, in increasing order (empty: every sample). @p progress counts
/// samples; returning false cancels (IoError Cancelled).
CaptureHealth checkCaptureHealth(const HiddenStateCapture& capture, const ProgressFn& progress = {},
                                 const std::vector<std::int64_t>& samples = {});

/// @brief checkCaptureHealth() of the samples a run reads (@p samples; empty: every sample): the first error
/// throws ForwardInputError naming its file, sample and field (an acceptance on such a capture would report
/// a number that means nothing); the warnings are returned. Only what the run reads is checked, so that a
/// run on a few anchors of a large capture does not read all of it first.
std::vector<CaptureFinding> requireHealthySamples(const HiddenStateCapture& capture,
                                                  const std::vector<std::int64_t>& samples);

/// @brief "error", "warning".
const char* severityName(CaptureFinding::Severity severity);

/// @brief "warning: FILE: sample S, hidden_states[layer L]: MESSAGE", the line every front end prints.
std::string findingLine(const CaptureFinding& finding);

/// @brief What a BF16 draft's near-zero acceptance at position 0 usually means, or empty when
/// @p firstPositionAcceptance is not near zero: the numbers alone read as "this draft is useless", while the
/// usual causes are inputs that do not belong together.
std::string lowAcceptanceHint(double firstPositionAcceptance);

} // namespace spark
