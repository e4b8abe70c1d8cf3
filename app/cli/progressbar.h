#pragma once

#include "core/progress.h"

#include <string>

namespace spark::cli {

/// @brief A ProgressFn that draws a one-line bar on stderr (only when stderr is a terminal, unless
/// forced) and returns false once Ctrl-C was pressed, so that core stops and cleans up.
ProgressFn stderrProgress(std::string label);

/// @brief Installs the SIGINT handler that stderrProgress() reports as a cancel request.
void installInterruptHandler();

/// @brief True after Ctrl-C.
bool interrupted();

} // namespace spark::cli
