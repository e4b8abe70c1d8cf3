#include "core/forward/capturehealth.h"

#include "core/forward/draftspec.h"
#include "core/io/ioerror.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>

namespace spark {
namespace {

/// Counts of one layer's rows in one sample.
struct RowCounts
{
    std::int64_t nonFinite = 0, zero = 0, constant = 0, first = -1;
};

std::string rowsText(std::int64_t count, std::int64_t of)
{
    return std::to_string(count) + " of " + std::to_string(of) + " rows";
}

} // namespace

bool CaptureHealth::hasErrors() const
{
    for (const auto& f : findings) {
        if (f.severity == CaptureFinding::Severity::Error) {
            return true;
        }
    }
    return false;
}

const char* severityName(CaptureFinding::Severity severity)
{
    return severity == CaptureFinding::Severity::Error ? "error" : "warning";
}

std::string findingLine(const CaptureFinding& f)
{
    const auto sample = f.sample < 0 ? std::string() : "sample " + std::to_string(f.sample) + ", ";
    return std::string(severityName(f.severity)) + ": " + f.file + ": " + sample + f.field + ": " + f.message;
}

namespace {

/// vLLM hands drafts the last layer before the final norm; SpecForge and DeepSpec store it after. An RMSNorm
/// output has every row's RMS nearly equal (the norm weight's, up to how x² and w² correlate), while residual
/// streams vary from row to row: on the trained target the last layer's row RMS varies by 14 % (coefficient
/// of variation) before the norm and 0.5 % after it.
constexpr double kPostNormVariation = 0.02;
constexpr std::int64_t kPostNormMinRows = 16;

std::optional<CaptureFinding> postNormFinding(const CaptureInfo& info, int lastSlot, double sum,
                                              double squares, std::int64_t rows)
{
    if (rows < kPostNormMinRows) {
        return std::nullopt;
    }
    const double mean = sum / static_cast<double>(rows);
    const double variance = std::max(0.0, squares / static_cast<double>(rows) - mean * mean);
    const double variation = mean > 0 ? std::sqrt(variance) / mean : 0;
    if (variation >= kPostNormVariation) {
        return std::nullopt;
    }
    char text[64];
    std::snprintf(text, sizeof text, "%.4f over %lld rows", variation, static_cast<long long>(rows));
    return CaptureFinding{
        CaptureFinding::Severity::Warning,
        "post-norm",
        info.path.string(),
        -1,
        "hidden_states[layer " + std::to_string(info.layerIds[static_cast<std::size_t>(lastSlot)]) + "]",
        "the last layer looks taken after the final norm: its rows' RMS hardly varies (coefficient of "
        "variation " +
            std::string(text) +
            "), as an RMSNorm's output does; vLLM hands drafts the last layer before the norm (SpecForge and "
            "DeepSpec store it after), so recomputing the target's tokens from it applies the norm twice"};
}

} // namespace

CaptureHealth checkCaptureHealth(const HiddenStateCapture& capture, const ProgressFn& progress,
                                 const std::vector<std::int64_t>& samples)
{
    std::vector<std::int64_t> all;
    if (samples.empty()) {
        all.resize(static_cast<std::size_t>(capture.sampleCount()));
        std::iota(all.begin(), all.end(), 0);
    }
    const auto& toRead = samples.empty() ? all : samples;
    const auto& info = capture.info();
    const auto layers = static_cast<int>(info.layerIds.size());
    std::vector<int> slots(static_cast<std::size_t>(layers));
    std::iota(slots.begin(), slots.end(), 0);
    const std::int64_t h = info.hiddenSize;
    // The last layer's row RMS over every row read: after a final RMSNorm every row has nearly the same.
    const auto lastSlot = static_cast<int>(std::max_element(info.layerIds.begin(), info.layerIds.end()) -
                                           info.layerIds.begin());
    double rmsSum = 0, rmsSquares = 0;
    std::int64_t rmsRows = 0;
    CaptureHealth health;
    for (std::size_t n = 0; n < toRead.size(); ++n) {
        if (!reportProgress(progress, n, toRead.size())) {
            throw IoError(IoErrorKind::Cancelled, "", "capture check cancelled");
        }
        const std::int64_t s = toRead[n];
        const auto length = capture.sampleLength(s);
        const Activations rows = capture.hidden(s, slots, length);
        std::vector<RowCounts> counts(static_cast<std::size_t>(layers));
        for (std::int64_t t = 0; t < length; ++t) {
            for (int l = 0; l < layers; ++l) {
                const float* v = rows.row(t) + static_cast<std::int64_t>(l) * h;
                bool finite = true, zero = true, constant = true;
                for (std::int64_t i = 0; i < h; ++i) {
                    finite = finite && std::isfinite(v[i]);
                    zero = zero && v[i] == 0.0f;
                    constant = constant && v[i] == v[0];
                }
                auto& c = counts[static_cast<std::size_t>(l)];
                const bool defect = !finite || zero || (constant && h > 1);
                c.nonFinite += finite ? 0 : 1;
                c.zero += finite && zero ? 1 : 0;
                c.constant += finite && !zero && constant && h > 1 ? 1 : 0;
                if (defect && c.first < 0) {
                    c.first = t;
                }
                if (l == lastSlot && info.lastLayerIncluded && finite && !zero) {
                    double squares = 0;
                    for (std::int64_t i = 0; i < h; ++i) {
                        squares += static_cast<double>(v[i]) * v[i];
                    }
                    const double rms = std::sqrt(squares / static_cast<double>(h));
                    rmsSum += rms;
                    rmsSquares += rms * rms;
                    ++rmsRows;
                }
            }
        }
        health.rows += length;
        const auto file = capture.sampleFile(s).string();
        for (int l = 0; l < layers; ++l) {
            const auto& c = counts[static_cast<std::size_t>(l)];
            const auto field =
                "hidden_states[layer " + std::to_string(info.layerIds[static_cast<std::size_t>(l)]) + "]";
            const auto add = [&](CaptureFinding::Severity severity, const char* check,
                                 const std::string& message) {
                health.findings.push_back({severity, check, file, s, field, message});
            };
            const auto where = " (first at token " + std::to_string(c.first) + ")";
            if (c.nonFinite > 0) {
                add(CaptureFinding::Severity::Error, "non-finite",
                    rowsText(c.nonFinite, length) + " hold NaN or Inf" + where);
            }
            if (c.zero == length && length > 0) {
                add(CaptureFinding::Severity::Error, "all-zero",
                    "every row is zero: nothing was captured (vLLM's hidden-state extraction wrote all-zero "
                    "states for hybrid verifiers before vllm#46301)");
            } else if (c.zero > 0) {
                add(CaptureFinding::Severity::Warning, "zero-rows",
                    rowsText(c.zero, length) + " are all zero" + where);
            }
            if (c.constant > 0) {
                add(CaptureFinding::Severity::Warning, "constant-rows",
                    rowsText(c.constant, length) + " hold one value repeated" + where);
            }
        }
    }
    if (const auto finding = postNormFinding(info, lastSlot, rmsSum, rmsSquares, rmsRows)) {
        health.findings.push_back(*finding);
    }
    health.samples = static_cast<std::int64_t>(toRead.size());
    reportProgress(progress, static_cast<std::uint64_t>(health.samples),
                   static_cast<std::uint64_t>(health.samples));
    return health;
}

std::vector<CaptureFinding> requireHealthySamples(const HiddenStateCapture& capture,
                                                  const std::vector<std::int64_t>& samples)
{
    std::vector<CaptureFinding> warnings;
    for (const auto& f : checkCaptureHealth(capture, {}, samples).findings) {
        if (f.severity == CaptureFinding::Severity::Error) {
            throw ForwardInputError(f.file, "sample " + std::to_string(f.sample) + ": " + f.field, f.message);
        }
        warnings.push_back(f);
    }
    return warnings;
}

std::string lowAcceptanceHint(double firstPositionAcceptance)
{
    if (!(firstPositionAcceptance < 0.05)) {
        return {};
    }
    return "the BF16 draft accepts almost nothing at position 0; this usually means the inputs do not belong "
           "together: a capture of another target model (or of the target at another precision than the "
           "draft "
           "was trained against), layer ids that do not match the draft's (vLLM and SGLang number them one "
           "apart), a last layer captured after the norm where the draft expects it before, or hidden states "
           "that are zero (capture check PATH)";
}

} // namespace spark
