#include "planargs.h"

#include "core/plan/planfile.h"
#include "core/quant/roundingmethod.h"

namespace spark::cli {

const std::vector<std::string>& planOptionNames()
{
    static const std::vector<std::string> names{"preset",        "target", "ignore", "scheme", "rounding",
                                                "target-layers", "bits",   "group",  "tp",     "plan-file"};
    return names;
}

PlanOptions planOptionsFrom(const Args& args)
{
    // --plan-file gives the starting point; the command line adds entries after the file's (scheme rules
    // added last win) and overrides its single values.
    PlanOptions options;
    if (const auto file = args.value("plan-file")) {
        options = readPlanFile(*file);
    }
    options.preset = args.value("preset", options.preset);
    for (const auto& [name, list] :
         {std::pair{"target", &options.targets}, std::pair{"ignore", &options.ignore},
          std::pair{"scheme", &options.schemes}}) {
        const auto added = args.values(name);
        list->insert(list->end(), added.begin(), added.end());
    }
    // --rounding METHOD sets the default (the last one wins); --rounding ENTRY=METHOD adds a rule after the
    // file's (a later matching rule wins, as for --scheme).
    for (const auto& value : args.values("rounding")) {
        if (value.find('=') != std::string::npos) {
            options.roundings.push_back(value);
        } else if (const auto* method = findRoundingMethod(value)) {
            options.rounding = std::string(method->name);
        } else {
            throw UsageError("--rounding '" + value + "': not a rounding method (" + roundingMethodNames() +
                             ") nor ENTRY=METHOD");
        }
    }
    if (args.value("target-layers")) {
        options.targetLayers = static_cast<int>(args.integer("target-layers", 0, 0, 100000));
    }
    options.bits = static_cast<int>(args.integer("bits", options.bits, 4, 8));
    if (options.bits != 4 && options.bits != 8) {
        throw UsageError("--bits must be 4 or 8");
    }
    options.groupSize = static_cast<int>(args.integer("group", options.groupSize, -1, 128));
    if (options.groupSize != -1 && options.groupSize != 32 && options.groupSize != 64 &&
        options.groupSize != 128) {
        throw UsageError("--group must be 32, 64, 128 or -1 (per channel)");
    }
    options.tpDegree = static_cast<int>(args.integer("tp", options.tpDegree, 1, 64));
    // A file's budget record describes its rules only: anything that changes the plan drops it.
    for (const char* name :
         {"preset", "target", "ignore", "scheme", "rounding", "target-layers", "bits", "group", "tp"}) {
        if (!args.values(name).empty()) {
            options.budget.reset();
        }
    }
    return options;
}

void savePlanIfAsked(const Args& args, const PlanOptions& options)
{
    if (const auto file = args.value("save-plan")) {
        writePlanFile(*file, options);
    }
}

} // namespace spark::cli
