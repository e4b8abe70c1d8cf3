#include "speedargs.h"

#include "core/bench/speedmodelplan.h"
#include "core/io/checkpoint.h"
#include "planargs.h"

#include <stdexcept>

namespace spark::cli {
namespace {

// The speed-model options `report` and `card` both take with one meaning.
constexpr Option kDrafterKind{"drafter-kind", "chain|block", "the planned draft's, else chain",
                              "chain (EAGLE-3) or block (DFlash, DSpark) drafting (with --drafter-ms)"};
constexpr Option kQuantizedArm{"quantized-arm", "ARM", "the first arm after the baseline that speculates",
                               "the benchmark arm measured with the quantized draft (with --drafter-ms)"};

/// --drafter-ms, --drafter-kind, --saving-ms and --quantized-arm; nullopt without --drafter-ms.
std::optional<SpeedModelOptions> drafterOptionsFrom(const Args& args,
                                                    const std::vector<std::string>& needDrafter)
{
    if (!args.value("drafter-ms")) {
        for (const auto& name : needDrafter) {
            if (args.value(name)) {
                throw UsageError("--" + name +
                                 " needs --drafter-ms MS (the profiled drafter time per verify cycle)");
            }
        }
        return std::nullopt;
    }
    SpeedModelOptions options;
    options.drafterMs = args.number("drafter-ms", 0);
    if (!(options.drafterMs > 0)) {
        throw UsageError("--drafter-ms must be a positive number of milliseconds");
    }
    if (const auto kindName = args.value("drafter-kind")) {
        const auto kind = parseDrafterKind(*kindName);
        if (!kind) {
            throw UsageError("--drafter-kind must be chain (EAGLE-3) or block (DFlash, DSpark)");
        }
        options.kind = *kind;
        options.kindBasis = "given";
    } else {
        options.kind = DrafterKind::Chain;
        options.kindBasis = "assumed: give --drafter-kind or --plan";
    }
    if (args.value("saving-ms")) {
        options.savingMs = args.number("saving-ms", 0);
        if (!(*options.savingMs >= 0)) {
            throw UsageError("--saving-ms must be a number of milliseconds, 0 or more");
        }
    }
    options.quantizedArm = args.value("quantized-arm");
    return options;
}

} // namespace

OptionTable speedOptionTable()
{
    return joinTables({{{"drafter-ms", "MS", "",
                         "the profiled drafter time per verify cycle (BF16 draft): adds the speed model "
                         "(predicted tok/s and the best k)"},
                        kDrafterKind,
                        {"saving-ms", "MS", "",
                         "the drafter time per cycle the quantized draft saves (with --drafter-ms; excludes "
                         "--plan)"},
                        {"plan", "DRAFT_PATH", "",
                         "plan this draft with the plan options, which need it: its streamed bytes give the "
                         "saving, its architecture the drafter kind (with --drafter-ms)"},
                        kQuantizedArm},
                       planOptionTable()});
}

OptionTable cardSpeedOptionTable()
{
    return {{"drafter-ms", "MS", "",
             "the profiled drafter time per verify cycle (BF16 draft): the card predicts the plan's speed "
             "change from the --bench results (needs --bench)"},
            kDrafterKind,
            {"saving-ms", "MS", "from the plan's streamed bytes",
             "the drafter time per cycle the quantized draft saves (with --drafter-ms)"},
            kQuantizedArm};
}

std::optional<SpeedModelOptions> speedModelOptionsFrom(const Args& args)
{
    const auto planPath = args.value("plan");
    if (!planPath) {
        for (const auto& option : planOptionTable()) {
            if (!args.values(std::string(option.name)).empty()) {
                throw UsageError("--" + std::string(option.name) +
                                 " is a plan option: it needs --plan DRAFT_PATH");
            }
        }
    }
    auto options = drafterOptionsFrom(args, {"drafter-kind", "saving-ms", "plan", "quantized-arm"});
    if (!options || !planPath) {
        return options;
    }
    if (options->savingMs) {
        throw UsageError("--saving-ms and --plan exclude each other");
    }
    const auto draft = Checkpoint::open(*planPath);
    const auto infos = draft.tensorInfos();
    const auto plan = makePlan(draft.config(), infos, planOptionsFrom(args));
    if (!plan.errors.empty()) {
        throw std::runtime_error("plan of " + *planPath + ": " + plan.errors.front());
    }
    if (plan.sizes.streamedBefore == 0) {
        throw std::runtime_error("plan of " + *planPath + ": the draft streams no bytes per step");
    }
    applyPlan(*options, plan, args.value("drafter-kind").has_value());
    return options;
}

std::optional<SpeedModelOptions> cardSpeedModelOptionsFrom(const Args& args, const QuantPlan& plan)
{
    auto options = drafterOptionsFrom(args, {"drafter-kind", "saving-ms", "quantized-arm"});
    if (!options) {
        return options;
    }
    if (args.values("bench").empty()) {
        throw UsageError("--drafter-ms predicts from benchmarks: give them with --bench FILE");
    }
    const auto saving = options->savingMs;
    applyPlan(*options, plan, args.value("drafter-kind").has_value());
    options->savingMs = saving; // a given saving wins over the plan's streamed bytes
    return options;
}

} // namespace spark::cli
