#pragma once

#include "options.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace spark::cli {

/// @brief Thrown for a malformed command line; main() prints it with the command's usage line, exit 2.
class UsageError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// @brief A small, strict option parser: `--name value`, `--name=value`, repeatable options and flags.
/// Options not in the command's table are errors (typos must not be silently ignored in scripts).
class Args
{
  public:
    /// @param table the command's options (entries without a value are flags). A deprecated spelling is
    /// stored under its replacement's name, after one notice on stderr (deprecationNotice()).
    Args(const std::vector<std::string>& argv, const OptionTable& table);

    bool flag(const std::string& name) const;
    std::optional<std::string> value(const std::string& name) const;
    std::string value(const std::string& name, const std::string& fallback) const;
    std::vector<std::string> values(const std::string& name) const;
    /// Integer value with range check; UsageError naming the option otherwise.
    long long integer(const std::string& name, long long fallback, long long min, long long max) const;
    double number(const std::string& name, double fallback) const;
    const std::vector<std::string>& positional() const { return m_positional; }
    /// Exactly @p count positional arguments, else UsageError.
    void expectPositional(std::size_t min, std::size_t max = 0) const;

  private:
    std::map<std::string, std::vector<std::string>> m_values;
    std::vector<std::string> m_flags;
    std::vector<std::string> m_positional;
};

/// @brief Prints "sparkulator-cli: OLD is deprecated, use --REPLACEMENT" on stderr (@p old with its dashes).
void deprecationNotice(const std::string& old, std::string_view replacement);

/// @brief "2GB", "500MiB", "1024" → bytes. UsageError when malformed.
unsigned long long parseByteSize(const std::string& text);

} // namespace spark::cli
