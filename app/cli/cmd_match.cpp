// `match ENTRY NAME...`: how vLLM matches one quantization entry against module names.
#include "args.h"
#include "command.h"
#include "core/plan/matchentry.h"

#include <iostream>
#include <limits>

namespace spark::cli {

OptionTable matchOptions()
{
    return {};
}

int runMatch(const std::vector<std::string>& argv)
{
    const Args args(argv, matchOptions());
    args.expectPositional(2, std::numeric_limits<std::size_t>::max());
    const MatchEntry entry(args.positional().front());
    if (!entry.isValid()) {
        std::cerr << "sparkulator-cli match: " << entry.errorMessage() << "\n";
        return kExitError;
    }
    for (std::size_t i = 1; i < args.positional().size(); ++i) {
        const auto& name = args.positional()[i];
        std::cout << (entry.matches(name) ? "match" : "no-match") << "\t" << name << "\n";
    }
    return kExitOk;
}

} // namespace spark::cli
