#include "views/plan/acceptancescoring.h"

namespace spark {

AcceptanceScores scoreByAcceptance(std::shared_ptr<const Checkpoint> checkpoint, const PlanOptions& plan,
                                   const AcceptanceObjectiveInputs& inputs, const ProgressFn& progress)
{
    // The capture and target are opened first: a wrong path fails before any sweep.
    auto objective = std::make_shared<const AcceptanceObjective>(inputs);
    SweepOptions options;
    options.plan = plan;
    options.roundings = parseRoundingCandidates("rtn,mse,range");
    options.includeLmHead = true;
    const auto part = [&progress](double from, double to) -> ProgressFn {
        return [&progress, from, to](std::uint64_t done, std::uint64_t total) {
            const double f = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
            return reportProgress(progress, static_cast<std::uint64_t>((from + (to - from) * f) * 1e6),
                                  1000000);
        };
    };
    AcceptanceScores out;
    out.sweep = std::make_shared<const SweepResult>(sweepCheckpoint(*checkpoint, options, part(0.0, 0.1)));
    out.effects = std::make_shared<const UnitEffects>(objective->measureUnits(*out.sweep, part(0.1, 1.0)));
    out.objective = std::move(objective);
    return out;
}

} // namespace spark
