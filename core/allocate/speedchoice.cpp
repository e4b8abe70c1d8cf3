#include "core/allocate/speedchoice.h"

#include "core/io/ioerror.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace spark {

std::vector<SpeedPoint> speedAlongFrontier(const AcceptanceObjective& objective,
                                           const BudgetAllocator& allocator, const nlohmann::json& config,
                                           const std::vector<TensorInfo>& tensors, std::uint64_t budget,
                                           const AcceptanceSpeedInputs& timing, int maxPoints,
                                           const ProgressFn& progress)
{
    const auto last = allocator.bestWithin(budget);
    if (!last) {
        throw std::invalid_argument("no plan fits the budget");
    }
    // Evenly spread over the points' indices, which follow the streamed bytes; the budget's point last.
    std::set<std::size_t> picks{*last};
    const auto count = static_cast<std::size_t>(std::max(1, maxPoints));
    for (std::size_t i = 0; i + 1 < count && picks.size() < count; ++i) {
        picks.insert(*last * i / std::max<std::size_t>(1, count - 1));
    }
    std::vector<SpeedPoint> out;
    std::uint64_t done = 0;
    for (const auto index : picks) {
        if (!reportProgress(progress, done++, picks.size())) {
            throw IoError(IoErrorKind::Cancelled, "", "speed choice cancelled");
        }
        const auto plan = makeAllocationPlan(config, tensors, allocator, allocator.atFrontier(index));
        AcceptanceSummary summary;
        objective.measureSelection(plan, &summary);
        AcceptanceSpeedInputs inputs = timing;
        inputs.savingMs.reset();
        inputs.streamedBefore = allocator.sweep().streamedBefore;
        inputs.streamedAfter = plan.sizes.streamedAfter;
        const auto speed = predictAcceptanceSpeed(summary, inputs);
        out.push_back(
            {index, plan.sizes.streamedAfter, summary.tauBase, summary.tauQuant, speed.changeMeasured});
    }
    reportProgress(progress, picks.size(), picks.size());
    std::stable_sort(out.begin(), out.end(),
                     [](const SpeedPoint& a, const SpeedPoint& b) { return a.change > b.change; });
    return out;
}

} // namespace spark
