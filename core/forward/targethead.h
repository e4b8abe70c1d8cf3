#pragma once

#include "core/forward/hiddenstatecapture.h"
#include "core/forward/linearsource.h"

#include <memory>
#include <vector>

namespace spark {

/// @brief The target's own next-token choice recomputed from a capture: argmax(lm_head(norm(h_last))), where
/// h_last is the captured output of the target's last layer (a capture with last_layer_included). Needed when
/// the captured tokens are not the target's greedy output and no target_argmax was stored.
class TargetHead
{
  public:
    /// Reads lm_head (or the tied embedding) and the final norm from @p target; throws ForwardInputError
    /// naming the file and tensor, or the capture field when the capture lacks its last layer.
    TargetHead(std::shared_ptr<const Checkpoint> target, const HiddenStateCapture& capture, unsigned threads);

    /// @brief argmax of the target's logits at every position of @p sample.
    std::vector<std::int64_t> argmax(const HiddenStateCapture& capture, std::int64_t sample) const;

  private:
    std::shared_ptr<const LinearSource> m_head;
    std::vector<float> m_norm;
    double m_eps = 1e-6;
    int m_slot = 0;
    unsigned m_threads = 0;
};

} // namespace spark
