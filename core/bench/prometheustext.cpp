#include "core/bench/prometheustext.h"

#include "core/bench/bencherror.h"
#include "core/bench/textlines.h"
#include "core/bench/vllmresult.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

namespace spark {
namespace {

bool isBlank(char c)
{
    return c == ' ' || c == '\t';
}

bool isNameStart(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

bool isNameChar(char c)
{
    return isNameStart(c) || (c >= '0' && c <= '9');
}

std::string lower(std::string_view s)
{
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

/// A cursor over one line that reports errors with the line's location.
class LineScanner
{
  public:
    LineScanner(std::string_view text, const std::string& file, int line)
        : m_text(text), m_file(file), m_line(line)
    {
    }

    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek() const { return atEnd() ? '\0' : m_text[m_pos]; }
    void skipBlanks()
    {
        while (!atEnd() && isBlank(m_text[m_pos])) {
            ++m_pos;
        }
    }
    std::string_view rest() const { return m_text.substr(std::min(m_pos, m_text.size())); }
    std::string_view token()
    {
        const auto start = m_pos;
        while (!atEnd() && !isBlank(m_text[m_pos])) {
            ++m_pos;
        }
        return m_text.substr(start, m_pos - start);
    }
    std::string name(bool allowColon)
    {
        const auto start = m_pos;
        if (atEnd() || !isNameStart(peek()) || (!allowColon && peek() == ':')) {
            fail(atEnd() ? "expected a name at end of line"
                         : std::string("expected a name at '") + peek() + "'");
        }
        while (!atEnd() && isNameChar(peek()) && (allowColon || peek() != ':')) {
            ++m_pos;
        }
        return std::string(m_text.substr(start, m_pos - start));
    }
    void expect(char c)
    {
        if (peek() != c) {
            fail(std::string("expected '") + c + "'" +
                 (atEnd() ? " at end of line" : std::string(", got '") + peek() + "'"));
        }
        ++m_pos;
    }
    /// A quoted label value with the escapes \\, \" and \n.
    std::string quoted()
    {
        expect('"');
        std::string value;
        while (true) {
            if (atEnd()) {
                fail("unterminated label value");
            }
            const char c = m_text[m_pos++];
            if (c == '"') {
                return value;
            }
            if (c == '\\') {
                if (atEnd()) {
                    fail("unterminated escape in label value");
                }
                const char e = m_text[m_pos++];
                if (e == 'n') {
                    value.push_back('\n');
                } else if (e == '\\' || e == '"') {
                    value.push_back(e);
                } else {
                    fail(std::string("invalid escape '\\") + e +
                         "' in label value (only \\\\, \\\" and \\n)");
                }
            } else {
                value.push_back(c);
            }
        }
    }
    [[noreturn]] void fail(const std::string& problem) const { throw BenchError(m_file, m_line, problem); }

  private:
    std::string_view m_text;
    const std::string& m_file;
    int m_line;
    std::size_t m_pos = 0;
};

std::string unescapeHelp(std::string_view text)
{
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
            out.push_back(text[i + 1] == 'n' ? '\n' : '\\');
            ++i;
        } else {
            out.push_back(text[i]);
        }
    }
    return out;
}

const std::set<std::string>& knownTypes()
{
    static const std::set<std::string> types{"counter", "gauge",   "histogram", "gaugehistogram", "summary",
                                             "untyped", "unknown", "info",      "stateset"};
    return types;
}

/// Suffixes a family of the given type may add to its sample names (TYPE line, never the suffix, decides).
std::vector<std::string_view> suffixesFor(const std::string& type)
{
    if (type == "counter") {
        return {"_total", "_created"};
    }
    if (type == "histogram") {
        return {"_bucket", "_sum", "_count", "_created"};
    }
    if (type == "gaugehistogram") {
        return {"_bucket", "_gsum", "_gcount"};
    }
    if (type == "summary") {
        return {"_sum", "_count", "_created"};
    }
    if (type == "info") {
        return {"_info"};
    }
    return {};
}

} // namespace

std::optional<double> parsePromNumber(std::string_view text)
{
    if (text.empty()) {
        return std::nullopt;
    }
    const auto l = lower(text);
    if (l == "nan") {
        return std::numeric_limits<double>::quiet_NaN();
    }
    if (l == "inf" || l == "+inf") {
        return std::numeric_limits<double>::infinity();
    }
    if (l == "-inf") {
        return -std::numeric_limits<double>::infinity();
    }
    std::string_view body = text;
    if (body.front() == '+') {
        body.remove_prefix(1);
    }
    if (body.empty() || !(std::isdigit(static_cast<unsigned char>(body.front())) || body.front() == '.' ||
                          (body.front() == '-' && body.size() > 1))) {
        return std::nullopt;
    }
    // from_chars is locale-independent and accepts "2.7158921216e+010" (leading zero in the exponent).
    double value = 0;
    const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (ec != std::errc() || end != body.data() + body.size()) {
        return std::nullopt;
    }
    // from_chars also takes "inf"/"nan" spellings after a sign; they were handled above, so refuse here.
    if (!std::isfinite(value) && ec == std::errc() && body.find_first_of("iInN") != std::string_view::npos) {
        return std::nullopt;
    }
    return value;
}

PromSnapshot::PromSnapshot(std::string file, std::vector<PromSample> samples,
                           std::map<std::string, PromFamily> families, bool openMetrics)
    : m_file(std::move(file)), m_samples(std::move(samples)), m_families(std::move(families)),
      m_openMetrics(openMetrics)
{
}

const PromSample* PromSnapshot::find(std::string_view name, const PromLabels& labels) const
{
    for (const auto& s : m_samples) {
        if (s.name == name && s.labels == labels) {
            return &s;
        }
    }
    return nullptr;
}

std::vector<const PromSample*> PromSnapshot::series(std::string_view name) const
{
    std::vector<const PromSample*> out;
    for (const auto& s : m_samples) {
        if (s.name == name) {
            out.push_back(&s);
        }
    }
    return out;
}

PromSnapshot parsePrometheusText(std::string_view text, const std::string& file)
{
    std::vector<PromSample> samples;
    std::map<std::string, PromFamily> families;
    std::map<std::pair<std::string, PromLabels>, int> seen;
    bool eof = false;
    int lineNo = 0;
    for (std::string_view raw : splitLines(text)) {
        ++lineNo;
        // Leading and trailing whitespace is ignored (a CRLF file only adds a trailing \r).
        while (!raw.empty() && (isBlank(raw.back()) || raw.back() == '\r')) {
            raw.remove_suffix(1);
        }
        while (!raw.empty() && isBlank(raw.front())) {
            raw.remove_prefix(1);
        }
        if (raw.empty()) {
            continue;
        }
        if (eof) {
            throw BenchError(file, lineNo, "content after '# EOF'");
        }
        LineScanner scan(raw, file, lineNo);
        if (raw.front() == '#') {
            scan.expect('#');
            scan.skipBlanks();
            const auto keyword = scan.token();
            if (keyword == "EOF" && scan.rest().empty()) {
                eof = true;
                continue;
            }
            if (keyword != "HELP" && keyword != "TYPE" && keyword != "UNIT") {
                continue; // a plain comment
            }
            scan.skipBlanks();
            const auto name = scan.name(true);
            auto& family = families[name];
            family.name = name;
            if (keyword == "HELP") {
                // The docstring is everything after one separator and may be empty or end in a space;
                // the trailing blanks were trimmed with the line, which only loses insignificant space.
                auto rest = scan.rest();
                if (!rest.empty() && isBlank(rest.front())) {
                    rest.remove_prefix(1);
                }
                family.help = unescapeHelp(rest);
            } else if (keyword == "TYPE") {
                scan.skipBlanks();
                const auto type = lower(scan.token());
                if (!knownTypes().count(type)) {
                    scan.fail("unknown metric type '" + type + "' for " + name);
                }
                if (family.typeLine != 0) {
                    scan.fail("second TYPE line for " + name + " (first on line " +
                              std::to_string(family.typeLine) + ")");
                }
                family.type = type;
                family.typeLine = lineNo;
            } else {
                scan.skipBlanks();
                family.unit = std::string(scan.rest());
            }
            continue;
        }

        PromSample sample;
        sample.line = lineNo;
        sample.name = scan.name(true);
        scan.skipBlanks();
        if (scan.peek() == '{') {
            scan.expect('{');
            while (true) {
                scan.skipBlanks();
                if (scan.peek() == '}') {
                    scan.expect('}');
                    break;
                }
                auto labelName = scan.name(false);
                scan.skipBlanks();
                scan.expect('=');
                scan.skipBlanks();
                auto value = scan.quoted();
                if (sample.labels.count(labelName)) {
                    scan.fail("label '" + labelName + "' repeated");
                }
                sample.labels.emplace(std::move(labelName), std::move(value));
                scan.skipBlanks();
                if (scan.peek() == ',') {
                    scan.expect(',');
                } else if (scan.peek() != '}') {
                    scan.fail(scan.atEnd() ? "unterminated label set"
                                           : std::string("expected ',' or '}', got '") + scan.peek() + "'");
                }
            }
        }
        scan.skipBlanks();
        const auto valueText = scan.token();
        const auto value = parsePromNumber(valueText);
        if (!value) {
            scan.fail(valueText.empty()
                          ? "missing value for " + sample.name
                          : "invalid value '" + std::string(valueText) + "' for " + sample.name);
        }
        sample.value = *value;
        scan.skipBlanks();
        if (!scan.atEnd() && scan.peek() != '#') {
            const auto tsText = scan.token();
            const auto ts = parsePromNumber(tsText);
            if (!ts || !std::isfinite(*ts)) {
                scan.fail("invalid timestamp '" + std::string(tsText) + "'");
            }
            sample.timestamp = *ts;
            scan.skipBlanks();
        }
        // An OpenMetrics exemplar (" # {...} value [ts]") may follow; anything else is an error.
        if (!scan.atEnd() && scan.peek() != '#') {
            scan.fail("unexpected text after the value: '" + std::string(scan.rest()) + "'");
        }
        const auto key = std::make_pair(sample.name, sample.labels);
        if (const auto it = seen.find(key); it != seen.end()) {
            scan.fail("duplicate series " + sample.name + " (first on line " + std::to_string(it->second) +
                      ")");
        }
        seen.emplace(key, lineNo);
        samples.push_back(std::move(sample));
    }

    // Resolve families only after all TYPE lines are known; match the exact name first, then a suffix the
    // family's type allows (so "x_total" of counter "x" in OpenMetrics, "h_bucket" of histogram "h").
    for (auto& s : samples) {
        if (const auto it = families.find(s.name); it != families.end() && it->second.typeLine != 0) {
            s.family = s.name;
            s.type = it->second.type;
            continue;
        }
        s.family = s.name;
        s.type = "untyped";
        for (const auto& [name, family] : families) {
            if (family.typeLine == 0 || s.name.size() <= name.size() ||
                s.name.compare(0, name.size(), name) != 0) {
                continue;
            }
            const std::string_view suffix = std::string_view(s.name).substr(name.size());
            const auto allowed = suffixesFor(family.type);
            if (std::find(allowed.begin(), allowed.end(), suffix) != allowed.end()) {
                s.family = name;
                s.type = family.type;
                break;
            }
        }
    }
    if (!eof) {
        for (const auto& s : samples) {
            if (s.timestamp && *s.timestamp != std::floor(*s.timestamp)) {
                throw BenchError(file, s.line,
                                 "timestamp must be an integer of milliseconds in text format 0.0.4");
            }
        }
    }
    return PromSnapshot(file, std::move(samples), std::move(families), eof);
}

PromSnapshot loadPrometheusFile(const std::filesystem::path& path)
{
    return parsePrometheusText(readBenchFile(path), path.string());
}

} // namespace spark
