// `card PATH [--out FILE] [plan options] [card options] [--drafter-ms MS [--drafter-kind K]
// [--saving-ms MS]]`: the model card of a planned export; with a drafter time and --bench, the speed
// model's predicted and measured change for the plan.
#include "args.h"
#include "cardargs.h"
#include "command.h"
#include "core/bench/modelcard.h"
#include "core/io/filewriter.h"
#include "core/io/ioerror.h"
#include "planargs.h"
#include "speedargs.h"

#include <filesystem>
#include <iostream>

namespace spark::cli {

OptionTable cardOptions()
{
    return joinTables({{{"out", "FILE", "stdout", "write the card to FILE (replaced whole or not at all)"}},
                       planOptionTable(),
                       cardOptionTable(),
                       cardSpeedOptionTable()});
}

int runCard(const std::vector<std::string>& argv)
{
    const Args args(argv, cardOptions());
    args.expectPositional(1);
    const auto source = Checkpoint::open(args.positional()[0]);
    std::vector<TensorInfo> infos;
    for (const auto& t : source.tensors()) {
        infos.push_back(t.info);
    }
    const auto plan = makePlan(source.config(), infos, planOptionsFrom(args));
    if (!plan.errors.empty()) {
        std::cerr << "sparkulator-cli card: plan error: " << plan.errors.front() << "\n";
        return kExitError;
    }
    const auto out = args.value("out");
    const std::filesystem::path outputName = out ? std::filesystem::path(*out).parent_path()
                                                 : std::filesystem::path(source.folder().string() + "-w4a16");
    auto cardOptions = cardOptionsFrom(args);
    if (const auto speed = cardSpeedModelOptionsFrom(args, plan)) {
        cardOptions.benchmarks->speedModel = computeSpeedModel(*cardOptions.benchmarks, *speed);
    }
    const auto card = renderModelCard(modelCardInputs(source, plan, outputName, cardOptions));
    if (!out) {
        std::cout << card;
        return kExitOk;
    }
    // An existing card is replaced whole or not at all.
    replaceTextFile(*out, card);
    std::cout << "wrote " << *out << "\n";
    return kExitOk;
}

} // namespace spark::cli
