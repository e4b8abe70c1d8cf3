#pragma once

#include "core/forward/acceptance.h"

#include <cstdint>
#include <vector>

namespace spark {

/// @brief The anchors an acceptance-driven plan is chosen on and those it is reported on, from disjoint
/// samples: choosing the best of many candidates on the same anchors it is then reported on would flatter
/// it. Anchors of one sample are correlated (one context), so the split is by sample, not by anchor.
struct AnchorSplit
{
    std::vector<Anchor> screen;     ///< every candidate of every unit: a prefix of the confirm draw
    std::vector<Anchor> confirm;    ///< the survivors of the screen and the plan's joint measurement
    std::vector<Anchor> report;     ///< held out: the chosen plan's and the recipe's Δτ
    std::int64_t selectionPool = 0; ///< eligible anchors of the selection samples
};

/// @brief How many anchors each part draws (0: every anchor of its samples).
struct AnchorSplitCounts
{
    std::int64_t screen = 64;
    std::int64_t confirm = 256;
    std::int64_t report = 0;
    std::uint64_t seed = 0;
};

/// @brief Samples 0, 2, 4, … select and samples 1, 3, 5, … report. The screen and confirm anchors are
/// drawn by sampleAnchors() with one seed, so the screen anchors are among the confirm anchors (the same
/// partial shuffle, stopped earlier). Throws std::invalid_argument when either part has no anchor (a
/// capture of one sample cannot be split).
AnchorSplit splitAnchors(const std::vector<Anchor>& eligible, const AnchorSplitCounts& counts);

} // namespace spark
