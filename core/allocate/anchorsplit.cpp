#include "core/allocate/anchorsplit.h"

#include <algorithm>
#include <stdexcept>

namespace spark {

AnchorSplit splitAnchors(const std::vector<Anchor>& eligible, const AnchorSplitCounts& counts)
{
    std::vector<Anchor> selection, report;
    for (const auto& a : eligible) {
        (a.sample % 2 == 0 ? selection : report).push_back(a);
    }
    if (selection.empty() || report.empty()) {
        throw std::invalid_argument(
            "choosing a plan by acceptance needs eligible anchors in at least two samples of the capture "
            "(even samples choose the plan, odd samples report it)");
    }
    AnchorSplit split;
    split.selectionPool = static_cast<std::int64_t>(selection.size());
    // 0 draws everything; a screen of everything needs a confirm of everything to stay inside it.
    const auto confirmCount =
        counts.confirm > 0 && counts.screen > 0 ? std::max(counts.confirm, counts.screen) : 0;
    split.confirm = sampleAnchors(selection, confirmCount, counts.seed);
    split.screen = sampleAnchors(selection, counts.screen, counts.seed);
    split.report = sampleAnchors(report, counts.report, counts.seed);
    return split;
}

} // namespace spark
