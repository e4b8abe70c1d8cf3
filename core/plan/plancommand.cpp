#include "core/plan/plancommand.h"

#include <algorithm>

namespace spark {

std::vector<std::string> planArguments(const PlanOptions& options)
{
    const PlanOptions defaults;
    std::vector<std::string> args;
    if (options.preset != defaults.preset) {
        args.insert(args.end(), {"--preset", options.preset});
    }
    for (const auto& target : options.targets) {
        args.insert(args.end(), {"--target", target});
    }
    for (const auto& ignore : options.ignore) {
        args.insert(args.end(), {"--ignore", ignore});
    }
    for (const auto& rule : options.schemes) {
        args.insert(args.end(), {"--scheme", rule});
    }
    if (options.rounding != defaults.rounding) {
        args.insert(args.end(), {"--rounding", options.rounding});
    }
    for (const auto& rule : options.roundings) {
        args.insert(args.end(), {"--rounding", rule});
    }
    if (options.targetLayers) {
        args.insert(args.end(), {"--target-layers", std::to_string(*options.targetLayers)});
    }
    if (options.bits != defaults.bits) {
        args.insert(args.end(), {"--bits", std::to_string(options.bits)});
    }
    if (options.groupSize != defaults.groupSize) {
        args.insert(args.end(), {"--group", std::to_string(options.groupSize)});
    }
    if (options.tpDegree != defaults.tpDegree) {
        args.insert(args.end(), {"--tp", std::to_string(options.tpDegree)});
    }
    return args;
}

std::string shellQuote(std::string_view word)
{
    const auto safe = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    };
    if (!word.empty() && std::all_of(word.begin(), word.end(), safe)) {
        return std::string(word);
    }
    std::string quoted = "'";
    for (const char c : word) {
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return quoted + "'";
}

std::string quantizeCommand(const std::string& source, const std::string& output, const PlanOptions& options)
{
    std::string command = "sparkulator-cli quantize " + shellQuote(source) + " --out " + shellQuote(output);
    for (const auto& arg : planArguments(options)) {
        command += " " + shellQuote(arg);
    }
    return command;
}

} // namespace spark
