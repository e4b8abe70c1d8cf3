#include "pairargs.h"

#include "backendargs.h"

namespace spark::cli {

OptionTable checkpointPairOptionTable()
{
    return joinTables({{kJsonOption, kTargetLayersOption, kThreadsOption}, backendOptionTable()});
}

CheckpointPairArgs checkpointPairFrom(const std::vector<std::string>& argv)
{
    Args args(argv, checkpointPairOptionTable());
    args.expectPositional(2);
    auto source = Checkpoint::open(args.positional()[0]);
    auto output = Checkpoint::open(args.positional()[1]);
    auto backend = backendFrom(args);
    const auto threads = static_cast<unsigned>(args.integer("threads", 0, 0, 1024));
    std::optional<int> targetLayers;
    if (args.value("target-layers")) {
        targetLayers = static_cast<int>(args.integer("target-layers", 0, 0, 100000));
    }
    return {std::move(args), std::move(source), std::move(output), std::move(backend), threads, targetLayers};
}

} // namespace spark::cli
