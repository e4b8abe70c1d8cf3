#pragma once

#include "core/forward/hiddenstatecapture.h"
#include "core/forward/linearsource.h"

#include <memory>
#include <vector>

namespace spark {

/// @brief The target's own next-token distribution recomputed from a capture: lm_head(norm(h_last)), where
/// h_last is the captured output of the target's last layer (a capture with last_layer_included). Its argmax
/// is needed when the captured tokens are not the target's greedy output and no target_argmax was stored;
/// its softmax at a temperature is what acceptance at that temperature is measured against.
class TargetHead
{
  public:
    /// Reads lm_head (or the tied embedding) and the final norm from @p target; throws ForwardInputError
    /// naming the file and tensor, or the capture field when the capture lacks its last layer.
    TargetHead(std::shared_ptr<const Checkpoint> target, const HiddenStateCapture& capture, unsigned threads);

    /// @brief argmax of the target's logits at every position of @p sample.
    std::vector<std::int64_t> argmax(const HiddenStateCapture& capture, std::int64_t sample) const;
    /// @brief The target's logits [rows.size(), vocabulary] at positions @p rows of @p sample (row t
    /// predicts token t + 1).
    Activations logits(const HiddenStateCapture& capture, std::int64_t sample,
                       const std::vector<std::int64_t>& rows) const;

  private:
    std::shared_ptr<const LinearSource> m_head;
    std::vector<float> m_norm;
    double m_eps = 1e-6;
    int m_slot = 0;
    unsigned m_threads = 0;
};

} // namespace spark
