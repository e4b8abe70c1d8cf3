#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace spark::cli {

/// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1; ///< the work ran and found problems (verify, lint errors)
inline constexpr int kExitError = 2;   ///< bad input or usage: a one-line message on stderr

/// @brief A subcommand: its name, a one-line summary, its usage text and its entry point.
struct Command
{
    std::string_view name;
    std::string_view summary;
    std::string_view usage;
    int (*run)(const std::vector<std::string>& args);
};

/// @brief Every subcommand, in the order `sparkulator-cli --help` lists them (commands.cpp).
const std::vector<Command>& commands();

} // namespace spark::cli
