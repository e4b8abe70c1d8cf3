#include "core/plan/matchentry.h"

#include <algorithm>
#include <cctype>

namespace spark {
namespace {

constexpr std::string_view kRegexPrefix = "re:";

std::string lower(std::string_view text)
{
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

} // namespace

MatchEntry::MatchEntry(std::string entry) : m_text(std::move(entry))
{
    m_regex = m_text.starts_with(kRegexPrefix);
    if (!m_regex) {
        return;
    }
    m_re.setPattern(QString::fromStdString(std::string(pattern())));
    m_re.setPatternOptions(QRegularExpression::UseUnicodePropertiesOption);
    if (!m_re.isValid()) {
        m_errorOffset = static_cast<int>(m_re.patternErrorOffset());
        m_error = "invalid regex '" + m_text + "' at position " + std::to_string(m_errorOffset) +
                  " of the pattern: " + m_re.errorString().toStdString();
        return;
    }
    // Compile (and JIT) now: every entry is matched against every module, and the preview reruns it.
    m_re.optimize();
}

std::string_view MatchEntry::pattern() const
{
    std::string_view text = m_text;
    if (m_regex) {
        text.remove_prefix(kRegexPrefix.size());
    }
    return text;
}

std::optional<std::size_t> MatchEntry::matchEnd(std::string_view name) const
{
    if (!m_regex) {
        return name == m_text ? std::optional<std::size_t>(name.size()) : std::nullopt;
    }
    if (!isValid()) {
        return std::nullopt;
    }
    const auto subject = QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size()));
    // AnchorAtOffsetMatchOption = Python re.match: anchored at the start, free at the end.
    const auto match = m_re.match(subject, 0, QRegularExpression::NormalMatch,
                                  QRegularExpression::AnchorAtOffsetMatchOption);
    if (!match.hasMatch()) {
        return std::nullopt;
    }
    return subject.left(match.capturedEnd(0)).toUtf8().size();
}

bool MatchEntry::matchesClass(std::string_view className) const
{
    if (m_regex) {
        return matches(className);
    }
    return lower(className).find(lower(m_text)) != std::string::npos;
}

std::vector<std::size_t> MatchEntry::unescapedDots() const
{
    std::vector<std::size_t> dots;
    if (!m_regex) {
        return dots;
    }
    const auto p = pattern();
    bool inClass = false;
    for (std::size_t i = 0; i < p.size(); ++i) {
        const char c = p[i];
        if (c == '\\') {
            ++i; // the escaped character is literal
            continue;
        }
        if (inClass) {
            // A ']' right after '[' or '[^' is a literal member, not the end of the class.
            if (c == ']' && !(p[i - 1] == '[' || (p[i - 1] == '^' && i >= 2 && p[i - 2] == '['))) {
                inClass = false;
            }
            continue;
        }
        if (c == '[') {
            inClass = true;
            continue;
        }
        if (c != '.') {
            continue;
        }
        // ".*", ".+", ".?" and ".{n}" are wildcards written on purpose; a bare dot between name parts
        // ("mlp.down_proj") is almost always meant as the separator.
        const bool quantified =
            i + 1 < p.size() && (p[i + 1] == '*' || p[i + 1] == '+' || p[i + 1] == '?' || p[i + 1] == '{');
        if (!quantified) {
            dots.push_back(i);
        }
    }
    return dots;
}

bool MatchEntry::hasEndAnchor() const
{
    if (!m_regex) {
        return true;
    }
    const auto p = pattern();
    if (p.ends_with("\\Z") || p.ends_with("\\z")) {
        return true;
    }
    if (!p.ends_with('$')) {
        return false;
    }
    // "\$" is a literal dollar: count the backslashes in front of it.
    std::size_t backslashes = 0;
    for (std::size_t i = p.size() - 1; i > 0 && p[i - 1] == '\\'; --i) {
        ++backslashes;
    }
    return backslashes % 2 == 0;
}

} // namespace spark
