#pragma once

#include "args.h"

namespace spark::cli {

/// @brief The `perf --forward DRAFT` benchmark (see perfforward.cpp); prints its lines, returns the exit
/// code.
int runForwardPerf(const Args& args, unsigned threads);

} // namespace spark::cli
