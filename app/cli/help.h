#pragma once

#include "command.h"

#include <iosfwd>
#include <string>

namespace spark::cli {

/// @brief "usage: sparkulator-cli NAME OPERANDS [options]": what a usage error prints.
std::string usageLine(const Command& command);

/// @brief `sparkulator-cli COMMAND --help`: the summary, the usage line and every option of the command's
/// table with its value, help and default, aligned.
void printCommandHelp(std::ostream& out, const Command& command);

/// @brief `sparkulator-cli help --markdown`: the reference of every command as Markdown (docs/cli.md).
void printMarkdownReference(std::ostream& out);

} // namespace spark::cli
