#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spark {

/// @brief Label set of one series, sorted by name (exposition order is irrelevant: OpenMetrics does not
/// sort).
using PromLabels = std::map<std::string, std::string>;

/// @brief One sample line of a Prometheus text or OpenMetrics exposition.
struct PromSample
{
    std::string name;  ///< the sample name as written, e.g. "vllm:spec_decode_num_drafts_total"
    PromLabels labels; ///< unescaped values
    double value = 0;  ///< NaN and ±Inf allowed
    /// As written: int64 milliseconds in text format 0.0.4, float seconds in OpenMetrics.
    std::optional<double> timestamp;
    std::string family; ///< the metric family (from TYPE lines), e.g. "vllm:iteration_tokens_total"
    std::string type;   ///< counter, gauge, histogram, summary, untyped, ... ("untyped" without TYPE)
    int line = 0;       ///< 1-based source line
};

/// @brief The HELP / TYPE / UNIT metadata of one metric family.
struct PromFamily
{
    std::string name;
    std::string type = "untyped";
    std::string help; ///< unescaped (\\ and \n)
    std::string unit;
    int typeLine = 0;
};

/// @brief A parsed /metrics scrape: every sample with its family, queryable by name and labels.
class PromSnapshot
{
  public:
    PromSnapshot() = default;
    PromSnapshot(std::string file, std::vector<PromSample> samples,
                 std::map<std::string, PromFamily> families, bool openMetrics);

    const std::string& file() const { return m_file; }
    const std::vector<PromSample>& samples() const { return m_samples; }
    const std::map<std::string, PromFamily>& families() const { return m_families; }
    /// @brief True when the text ended with "# EOF" (OpenMetrics 1.0): timestamps are then seconds.
    bool isOpenMetrics() const { return m_openMetrics; }

    /// @brief The sample with exactly this name and label set, or nullptr.
    const PromSample* find(std::string_view name, const PromLabels& labels = {}) const;
    /// @brief Every sample with this name (all label sets), in file order.
    std::vector<const PromSample*> series(std::string_view name) const;

  private:
    std::string m_file;
    std::vector<PromSample> m_samples;
    std::map<std::string, PromFamily> m_families;
    bool m_openMetrics = false;
};

/// @brief Parses the Prometheus text exposition format 0.0.4 and OpenMetrics 1.0 (bench-formats.md §2.4,
/// §2.5): HELP/TYPE/UNIT lines, escapes in label values and HELP, labels in any order with an optional
/// trailing comma, any blanks or tabs between tokens, NaN/±Inf, exponents (including Python's "e+010"),
/// optional timestamps, exemplars, and "# EOF". Families are taken from TYPE lines, never guessed from
/// a suffix (vllm:iteration_tokens_total is a histogram).
/// @throws BenchError with file and line for malformed lines, duplicate series or content after # EOF.
PromSnapshot parsePrometheusText(std::string_view text, const std::string& file);

/// @brief Reads and parses a scrape file. @throws BenchError.
PromSnapshot loadPrometheusFile(const std::filesystem::path& path);

/// @brief Parses a Go ParseFloat-style number: decimal or exponent forms, NaN, Inf, +Inf, -Inf (any case).
/// Locale-independent. nullopt when @p text is not entirely a number.
std::optional<double> parsePromNumber(std::string_view text);

} // namespace spark
