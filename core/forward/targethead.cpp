#include "core/forward/targethead.h"

#include "core/forward/blocks.h"
#include "core/forward/draftspec.h"
#include "core/forward/draftweights.h"

#include <algorithm>

namespace spark {

TargetHead::TargetHead(std::shared_ptr<const Checkpoint> target, const HiddenStateCapture& capture,
                       unsigned threads)
    : m_threads(threads)
{
    const auto& info = capture.info();
    if (!info.lastLayerIncluded) {
        throw ForwardInputError(
            info.path.string(), "__metadata__.last_layer_included",
            "is false: without the target's last layer its next tokens cannot be recomputed "
            "(store target_argmax or capture greedily)");
    }
    const auto config = target->config();
    const auto& text = config.contains("text_config") ? config["text_config"] : config;
    m_eps = text.value("rms_norm_eps", 1e-6);
    const DraftWeights weights(target, nullptr);
    m_head = weights.linear("lm_head");
    m_norm = weights.vector("norm.weight");
    if (m_head->cols() != info.hiddenSize || static_cast<std::int64_t>(m_norm.size()) != info.hiddenSize) {
        throw ForwardInputError(target->folder().string(), "lm_head.weight",
                                "takes " + std::to_string(m_head->cols()) +
                                    " inputs, the capture's hidden size is " +
                                    std::to_string(info.hiddenSize));
    }
    m_slot = static_cast<int>(std::max_element(info.layerIds.begin(), info.layerIds.end()) -
                              info.layerIds.begin());
}

std::vector<std::int64_t> TargetHead::argmax(const HiddenStateCapture& capture, std::int64_t sample) const
{
    Activations h = capture.hidden(sample, {m_slot}, capture.sampleLength(sample));
    rmsNorm(h, m_norm, m_eps);
    std::vector<std::int64_t> out;
    // A few rows at a time: logits are [rows, V].
    for (std::int64_t first = 0; first < h.rows; first += 64) {
        std::vector<std::int64_t> rows;
        for (std::int64_t r = first; r < std::min(h.rows, first + 64); ++r) {
            rows.push_back(r);
        }
        const Activations logits = linear(*m_head, h.gather(rows), m_threads);
        for (std::int64_t r = 0; r < logits.rows; ++r) {
            const float* row = logits.row(r);
            out.push_back(std::max_element(row, row + logits.cols) - row); // first maximum, as torch.argmax
        }
    }
    return out;
}

Activations TargetHead::logits(const HiddenStateCapture& capture, std::int64_t sample,
                               const std::vector<std::int64_t>& rows) const
{
    Activations h = capture.hiddenRows(sample, {m_slot}, rows);
    rmsNorm(h, m_norm, m_eps);
    return linear(*m_head, h, m_threads);
}

} // namespace spark
