#include "pairargs.h"

#include "backendargs.h"

namespace spark::cli {
namespace {

Args parsePairArgs(const std::vector<std::string>& argv)
{
    std::vector<std::string> optionNames{"target-layers", "threads"};
    optionNames.insert(optionNames.end(), backendOptionNames().begin(), backendOptionNames().end());
    Args args(argv, {"json"}, optionNames);
    args.expectPositional(2);
    return args;
}

} // namespace

CheckpointPairArgs checkpointPairFrom(const std::vector<std::string>& argv)
{
    auto args = parsePairArgs(argv);
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
