#include "planargs.h"

#include "core/plan/planfile.h"
#include "core/quant/roundingmethod.h"

namespace spark::cli {

OptionTable planOptionTable()
{
    return {
        {"preset", "P", "auto",
         "the recipe to start from (auto: the detected architecture's; none: nothing quantized)"},
        {"target", "E", "",
         "add a target entry to the preset's (an exact module name, re:REGEX or a class such as Linear; "
         "repeatable)"},
        {"ignore", "E", "", "add an ignore entry to the preset's: matching modules stay BF16 (repeatable)"},
        {"scheme", "ENTRY=S", "",
         "give the decision units ENTRY matches scheme S (BF16 keeps them); rules apply in order, the last "
         "match wins (repeatable)"},
        {"rounding", "M|ENTRY=M", "rtn",
         "rounding method (rtn, mse, range; codes on NVFP4A16) of quantized modules no rule names, or "
         "ENTRY=M a "
         "rule for the "
         "modules ENTRY matches (repeatable; the last match wins)"},
        kTargetLayersOption,
        {"bits", "4|8", "4", "bits of the default scheme (integer, symmetric)"},
        {"group", "32|64|128|-1", "128",
         "group size of the default scheme (-1: one scale per output channel)"},
        {"tp", "N", "1", "tensor-parallel degree the draft is served with (each rank's shapes must fit)"},
        {"plan-file", "FILE", "",
         "start from a saved plan: entries and rules given here add to its own, single values replace its "
         "own"},
    };
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
