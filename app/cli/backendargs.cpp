#include "backendargs.h"

#include <iostream>

namespace spark::cli {

std::unique_ptr<QuantBackend> backendFrom(const Args& args)
{
    const auto requested = parseBackend(args.value("backend", "auto"));
    if (!requested) {
        throw UsageError("--backend must be auto, cpu or cuda");
    }
    std::string notice;
    auto backend = makeBackend(*requested, &notice);
    if (!notice.empty()) {
        std::cerr << "sparkulator-cli: " << notice << "\n";
    }
    return backend;
}

} // namespace spark::cli
