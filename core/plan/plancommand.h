#pragma once

#include "core/plan/planoptions.h"

#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief The `plan`/`quantize` options that reproduce @p options, leaving out defaults: e.g.
/// {"--preset", "glm-dspark", "--ignore", "re:.*\.fc$", "--target-layers", "78"}. Entries keep their
/// order, so the command plans exactly what the GUI planned.
std::vector<std::string> planArguments(const PlanOptions& options);

/// @brief One word for a POSIX shell: unchanged when it holds only safe characters, otherwise in single
/// quotes (an embedded quote becomes '\'').
std::string shellQuote(std::string_view word);

/// @brief `sparkulator-cli quantize SOURCE --out OUTPUT <planArguments>`, quoted for a POSIX shell: the
/// GUI's plan as a command for scripts and CI.
std::string quantizeCommand(const std::string& source, const std::string& output, const PlanOptions& options);

} // namespace spark
