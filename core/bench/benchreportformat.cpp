#include "core/bench/benchreportformat.h"

#include "core/bench/speedmodelformat.h"
#include "core/util/textformat.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace spark {
namespace {

nlohmann::ordered_json jsonNumber(double v)
{
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json summaryJson(const SampleSummary& s)
{
    return {{"n", s.n},
            {"mean", jsonNumber(s.mean)},
            {"sd", jsonNumber(s.sd)},
            {"median", jsonNumber(s.median)},
            {"cv", jsonNumber(s.cv)},
            {"min", jsonNumber(s.min)},
            {"max", jsonNumber(s.max)}};
}

std::string escapeCell(const std::string& text)
{
    std::string out;
    for (const char c : text) {
        if (c == '|') {
            out += "\\|";
        } else if (c == '\n') {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

int digitsFor(const std::string& metric)
{
    if (metric == benchmetric::kAcceptanceLength) {
        return 4;
    }
    if (metric == benchmetric::kAcceptanceRate) {
        return 4;
    }
    return 3;
}

std::string meanSd(const SampleSummary& s, int digits)
{
    return formatFixed(s.mean, digits) + (s.n >= 2 ? " ± " + formatFixed(s.sd, digits) : std::string());
}

std::string promptText(long long len)
{
    return len > 0 ? std::to_string(len) : std::string("-");
}

} // namespace

std::string benchMetricLabel(const std::string& metric)
{
    if (metric == benchmetric::kDecodeTokS) {
        return "decode tok/s";
    }
    if (metric == benchmetric::kDecodeTokSPooled) {
        return "decode tok/s (pooled)";
    }
    if (metric == benchmetric::kOutputTokS) {
        return "output tok/s";
    }
    if (metric == benchmetric::kPrefillTokS) {
        return "prefill tok/s";
    }
    if (metric == benchmetric::kAcceptanceRate) {
        return "acceptance rate";
    }
    if (metric == benchmetric::kAcceptanceLength) {
        return "acceptance length";
    }
    return metric;
}

std::string benchReportMarkdown(const BenchReport& report, int headingLevel)
{
    const std::string h(static_cast<std::size_t>(std::max(1, headingLevel)), '#');
    std::string md;
    md += h + " Benchmark cells\n\n";
    md += "| arm | prompt len | n | decode tok/s (mean ± sd) | median | CV % | acceptance % | acceptance "
          "length | "
          "per-position acceptance |\n";
    md += "|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& c : report.cells) {
        const auto* decode = c.metric(benchmetric::kDecodeTokS);
        const auto* rate = c.metric(benchmetric::kAcceptanceRate);
        const auto* al = c.metric(benchmetric::kAcceptanceLength);
        std::string positions;
        for (const double p : c.perPositionMean) {
            positions += (positions.empty() ? "" : ", ") + formatFixed(p, 3);
        }
        md += "| " + escapeCell(c.arm) + " | " + promptText(c.promptLen) + " | " + std::to_string(c.records) +
              " | " + (decode ? meanSd(*decode, 3) : "-") + " | " +
              (decode ? formatFixed(decode->median, 3) : "-") + " | " +
              (decode ? formatFixed(100.0 * decode->cv, 2) : "-") + " | " +
              (rate ? formatFixed(100.0 * rate->mean, 2) : "-") + " | " +
              (al ? formatFixed(al->mean, 4) : "-") + " | " + (positions.empty() ? "-" : positions) + " |\n";
    }

    if (report.speedModel) {
        md += "\n" + speedModelMarkdown(*report.speedModel, headingLevel);
    }

    std::vector<std::string> metrics;
    for (const auto& c : report.comparisons) {
        if (std::find(metrics.begin(), metrics.end(), c.metric) == metrics.end()) {
            metrics.push_back(c.metric);
        }
    }
    const std::string ciLabel = formatGeneral(100.0 * report.confidence, 3) + " % CI";
    for (const auto& metric : metrics) {
        const int digits = digitsFor(metric);
        const std::string baseline =
            report.setups.size() == 1 ? escapeCell(report.baselineArm) : std::string("its setup's baseline");
        md += "\n" + h + " " + benchMetricLabel(metric) + ": arm − " + baseline + "\n\n";
        md += "| prompt len | arm | baseline | baseline mean ± sd | arm mean ± sd | Δ | Δ % | " + ciLabel +
              " | t | ν | p | σ (Gaussian-eq.) |\n";
        md += "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& c : report.comparisons) {
            if (c.metric != metric) {
                continue;
            }
            const auto& w = c.welch;
            md += "| " + promptText(c.promptLen) + " | " + escapeCell(c.candidateArm) + " | " +
                  escapeCell(c.baselineArm) + " | " + meanSd(c.baseline, digits) + " | " +
                  meanSd(c.candidate, digits) + " | " + formatFixed(w.diff, digits) + " | " +
                  formatFixed(w.deltaPercent, 2) + " | " +
                  (w.valid ? "[" + formatFixed(w.ciLow, digits) + ", " + formatFixed(w.ciHigh, digits) + "]"
                           : std::string("n/a")) +
                  " | " + formatFixed(w.t, 3) + " | " + formatFixed(w.df, 2) + " | " + formatGeneral(w.p, 3) +
                  " | " + formatFixed(w.sigma, 2) + (w.valid && !w.significant() ? " (n.s.)" : "") + " |\n";
        }
    }
    if (!report.warnings.empty()) {
        md += "\n" + h + " Warnings\n\n";
        for (const auto& w : report.warnings) {
            md += "- " + escapeCell(w.text()) + "\n";
        }
    }
    return md;
}

nlohmann::ordered_json benchReportJson(const BenchReport& report)
{
    nlohmann::ordered_json out;
    out["baseline"] = report.baselineArm;
    out["confidence"] = report.confidence;
    out["arms"] = report.arms;
    out["setups"] = nlohmann::ordered_json::array();
    for (const auto& setup : report.setups) {
        out["setups"].push_back({{"target_model", setup.targetModel},
                                 {"k", setup.k},
                                 {"baseline", setup.baselineArm},
                                 {"arms", setup.arms}});
    }
    out["prompt_lens"] = report.promptLens;
    out["cells"] = nlohmann::ordered_json::array();
    for (const auto& c : report.cells) {
        nlohmann::ordered_json cell;
        cell["arm"] = c.arm;
        cell["prompt_len"] = c.promptLen;
        cell["records"] = c.records;
        cell["metrics"] = nlohmann::ordered_json::object();
        for (const auto& [name, s] : c.metrics) {
            cell["metrics"][name] = summaryJson(s);
        }
        cell["per_position_acceptance"] = nlohmann::ordered_json::array();
        for (const double p : c.perPositionMean) {
            cell["per_position_acceptance"].push_back(jsonNumber(p));
        }
        if (c.pooledCounters) {
            const auto& k = *c.pooledCounters;
            nlohmann::ordered_json pooled{{"num_drafts", k.numDrafts},
                                          {"draft_tokens", k.draftTokens},
                                          {"accepted_tokens", k.acceptedTokens},
                                          {"accepted_per_position", k.acceptedPerPosition},
                                          {"acceptance_rate", jsonNumber(k.acceptanceRate())},
                                          {"acceptance_length", jsonNumber(k.meanAcceptanceLength())}};
            pooled["per_position_acceptance"] = nlohmann::ordered_json::array();
            for (const double p : k.perPositionRates()) {
                pooled["per_position_acceptance"].push_back(jsonNumber(p));
            }
            cell["pooled_counters"] = pooled;
        }
        cell["sources"] = c.sources;
        if (report.speedModel) {
            const auto* model = report.speedModel->cell(c.arm, c.promptLen);
            cell["speed_model"] = model ? speedModelCellJson(*model) : nlohmann::ordered_json(nullptr);
        }
        out["cells"].push_back(std::move(cell));
    }
    out["comparisons"] = nlohmann::ordered_json::array();
    for (const auto& c : report.comparisons) {
        const auto& w = c.welch;
        out["comparisons"].push_back({{"metric", c.metric},
                                      {"prompt_len", c.promptLen},
                                      {"baseline_arm", c.baselineArm},
                                      {"candidate_arm", c.candidateArm},
                                      {"baseline", summaryJson(c.baseline)},
                                      {"candidate", summaryJson(c.candidate)},
                                      {"valid", w.valid},
                                      {"diff", jsonNumber(w.diff)},
                                      {"delta_percent", jsonNumber(w.deltaPercent)},
                                      {"se", jsonNumber(w.se)},
                                      {"df", jsonNumber(w.df)},
                                      {"t", jsonNumber(w.t)},
                                      {"t_critical", jsonNumber(w.tCritical)},
                                      {"ci_low", jsonNumber(w.ciLow)},
                                      {"ci_high", jsonNumber(w.ciHigh)},
                                      {"delta_percent_ci_low", jsonNumber(w.deltaPercentCiLow)},
                                      {"delta_percent_ci_high", jsonNumber(w.deltaPercentCiHigh)},
                                      {"p", jsonNumber(w.p)},
                                      {"sigma_gaussian_equivalent", jsonNumber(w.sigma)},
                                      {"significant", w.significant()}});
    }
    if (report.speedModel) {
        out["speed_model"] = speedModelJson(*report.speedModel);
    }
    out["warnings"] = nlohmann::ordered_json::array();
    for (const auto& w : report.warnings) {
        out["warnings"].push_back({{"kind", benchWarningKindName(w.kind)},
                                   {"file", w.file},
                                   {"line", w.line},
                                   {"message", w.message}});
    }
    return out;
}

} // namespace spark
