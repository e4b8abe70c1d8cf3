#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

namespace spark::cli {

/// @brief One option of a command: the parser accepts what a table lists, and `--help` and docs/cli.md are
/// printed from the same entries, so the three cannot drift apart.
struct Option
{
    std::string_view name;        ///< without the leading "--"
    std::string_view value;       ///< the value's placeholder (N, FILE, auto|cpu|cuda); empty: a flag
    std::string_view defaultText; ///< what applies when it is not given; empty: nothing
    std::string_view help;        ///< one line
    /// Set on a deprecated spelling, kept for one release: parsed as the option named here, with a notice.
    std::string_view replacedBy = {};
};

using OptionTable = std::vector<Option>;

/// @brief The tables one after the other: a command's own options and the shared groups it takes.
OptionTable joinTables(std::initializer_list<OptionTable> tables);

/// @brief @p table with the entry named like @p option replaced by it: a shared option that means more in
/// one command keeps its place in the group.
OptionTable withOption(OptionTable table, const Option& option);

/// Options many commands take, with one text.
inline constexpr Option kThreadsOption{
    "threads", "N", "0", "worker threads, 0: every hardware thread (SPARK_THREADS caps the count)"};
inline constexpr Option kTargetLayersOption{
    "target-layers", "N", "from config.json",
    "the target model's layer count, which offsets draft layer indices in vLLM names"};
inline constexpr Option kJsonOption{"json", "", "", "print JSON on stdout instead of text"};

} // namespace spark::cli
