#pragma once

#include <QRegularExpression>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief One `targets` or `ignore` entry of a compressed-tensors quantization_config, compiled once and
/// matched with vLLM's semantics (format-spec §4.1, `_is_equal_or_regex_match`):
/// `re:X` is Python `re.match(X, name)` (anchored at the start only, never at the end); anything else is
/// exact string equality; matched against a class name, a literal entry is a case-insensitive substring
/// ("Linear" selects QKVParallelLinear but not ParallelLMHead).
///
/// PCRE2 (QRegularExpression) stands in for Python's `regex` module. They agree on everything drafts use
/// (anchors, escapes, classes, alternation, lookarounds, `(?i)`, `(?P<name>...)`, `(?P=name)`); Unicode
/// properties are on because Python 3 str patterns make `\w` and `\d` Unicode-aware. Known gaps: Python
/// rejects global flags that are not at the start and variable-width lookbehind, PCRE2 accepts them.
class MatchEntry
{
  public:
    /// @brief Compiles @p entry; an invalid regex yields !isValid() with its message and offset.
    explicit MatchEntry(std::string entry);

    /// The entry as written ("re:.*\.fc$", "lm_head", "Linear").
    const std::string& text() const { return m_text; }
    /// True for a `re:` entry.
    bool isRegex() const { return m_regex; }
    /// The regex source without "re:" (or the literal itself).
    std::string_view pattern() const;
    bool isValid() const { return m_error.empty(); }
    /// "invalid regex 're:(a' at position 5: missing closing parenthesis"; empty when valid.
    const std::string& errorMessage() const { return m_error; }
    /// Offset of the error inside pattern() (QRegularExpression::patternErrorOffset); -1 when valid.
    int errorOffset() const { return m_errorOffset; }

    /// @brief vLLM `_is_equal_or_regex_match(name, entry)`: re.match for `re:`, equality otherwise.
    bool matches(std::string_view name) const { return matchEnd(name).has_value(); }
    /// @brief vLLM `_is_equal_or_regex_match(className, entry, check_contains=True)`: re.match for `re:`,
    /// case-insensitive substring otherwise.
    bool matchesClass(std::string_view className) const;
    /// @brief Where a match of @p name ends (characters consumed by re.match; name.size() for a literal);
    /// nullopt when it does not match. A match that ends inside a name component ("model.fc|1") shows a
    /// pattern that lacks an end anchor.
    std::optional<std::size_t> matchEnd(std::string_view name) const;

    /// @brief Positions (in pattern()) of `.` outside a character class that is neither escaped nor
    /// followed by a quantifier: a dot meant literally that matches any character.
    std::vector<std::size_t> unescapedDots() const;
    /// @brief True when the regex can only match up to the end of the name: it ends with `$`, `\Z` or
    /// `\z`. Always true for a literal (equality).
    bool hasEndAnchor() const;

  private:
    std::string m_text;
    bool m_regex = false;
    QRegularExpression m_re;
    std::string m_error;
    int m_errorOffset = -1;
};

} // namespace spark
