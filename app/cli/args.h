#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace spark::cli {

/// @brief Thrown for a malformed command line; main() prints it with the command's usage, exit 2.
class UsageError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

/// @brief A small, strict option parser: `--name value`, `--name=value`, repeatable options and flags.
/// Unknown options are errors (typos must not be silently ignored in scripts).
class Args
{
  public:
    /// @param flags options without a value; @param options options that take one (possibly repeated).
    Args(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
         const std::vector<std::string>& options);

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

/// @brief "2GB", "500MiB", "1024" → bytes. UsageError when malformed.
unsigned long long parseByteSize(const std::string& text);

} // namespace spark::cli
