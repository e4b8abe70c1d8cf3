#include "numericsargs.h"

#include <stdexcept>
#include <string>

namespace spark::cli {

ForwardNumerics numericsFrom(const Args& args)
{
    try {
        return parseForwardNumerics(args.value("numerics", "fp32"));
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--") + e.what());
    }
}

} // namespace spark::cli
