#pragma once

#include "options.h"

#include <string>
#include <string_view>
#include <vector>

namespace spark::cli {

/// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1; ///< the work ran and found problems (verify, lint errors)
inline constexpr int kExitError = 2;   ///< bad input or usage: a one-line message on stderr

/// @brief A subcommand: its name, a one-line summary, its operands, its options and its entry point. The
/// parser, `--help` and docs/cli.md all read the same option table.
struct Command
{
    std::string_view name;
    std::string_view summary;
    std::string_view operands; ///< "PATH", "SRC OUT", "check FILE|DIR", with the options it requires
    OptionTable (*options)();
    int (*run)(const std::vector<std::string>& args);
};

/// @brief Every subcommand, in the order `sparkulator-cli --help` lists them (commands.cpp).
const std::vector<Command>& commands();

} // namespace spark::cli
