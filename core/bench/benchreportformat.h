#pragma once

#include "core/bench/benchreport.h"

#include <nlohmann/json.hpp>
#include <string>

namespace spark {

/// @brief A human label for a metric name, e.g. "decode tok/s" for decode_tok_s.
std::string benchMetricLabel(const std::string& metric);

/// @brief GitHub-flavoured Markdown for copy/paste: a cell table (n, mean ± sd, median, CV, acceptance,
/// acceptance length, per-position rates), one comparison table per compared metric (Δ, Δ %, CI, t, ν, p,
/// Gaussian-equivalent σ), and the warnings. Headings start at level @p headingLevel.
std::string benchReportMarkdown(const BenchReport& report, int headingLevel = 2);

/// @brief The whole report as JSON (NaN and infinities as null), with stable key order.
nlohmann::ordered_json benchReportJson(const BenchReport& report);

} // namespace spark
