#include "core/bench/speedmodelformat.h"

#include "core/bench/benchwarning.h"
#include "core/util/textformat.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace spark {
namespace {

nlohmann::ordered_json number(double v)
{
    return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json numbers(const std::vector<double>& values)
{
    auto out = nlohmann::ordered_json::array();
    for (const double v : values) {
        out.push_back(number(v));
    }
    return out;
}

std::string list(const std::vector<double>& values)
{
    std::string out;
    for (const double v : values) {
        out += (out.empty() ? "" : ", ") + formatSignificant(v);
    }
    return out;
}

std::string escapeCell(const std::string& text)
{
    std::string out;
    for (const char c : text) {
        out += c == '|' ? std::string("\\|") : std::string(1, c == '\n' ? ' ' : c);
    }
    return out;
}

std::string promptText(long long len)
{
    return len > 0 ? std::to_string(len) : std::string("-");
}

} // namespace

std::string formatSignificant(double value, int significant)
{
    if (!std::isfinite(value) || value == 0.0) {
        return std::isfinite(value) ? formatFixed(0.0, std::max(0, significant - 1))
                                    : formatGeneral(value, 1);
    }
    const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(value))));
    if (magnitude >= significant || magnitude < -3) {
        return formatGeneral(value, significant);
    }
    int decimals = std::max(0, significant - 1 - magnitude);
    auto text = formatFixed(value, decimals);
    // 9.9996 rounds up to "10.000": one digit too many.
    if (decimals > 0 && std::abs(std::strtod(text.c_str(), nullptr)) >= std::pow(10.0, magnitude + 1)) {
        text = formatFixed(value, decimals - 1);
    }
    return text;
}

std::string formatChangePercent(double fraction)
{
    const auto text = formatSignificant(100.0 * fraction);
    return (fraction > 0 ? "+" : "") + text + " %";
}

nlohmann::ordered_json speedModelCellJson(const SpeedModelCell& c)
{
    nlohmann::ordered_json out;
    out["k"] = c.k;
    out["acceptance_per_position"] = numbers(c.acceptance);
    out["tokens_per_verify"] = numbers(c.tokensPerVerify);
    out["measured_tok_s"] = number(c.measuredTokS);
    out["cycle_ms"] = number(c.cycleMs);
    out["drafter_ms"] = number(c.drafterMs);
    out["drafter_basis"] = c.drafterBasis;
    out["drafter_share"] = number(c.drafterShare());
    out["verify_ms"] = number(c.verifyMs);
    out["verify_ms_per_token"] = number(c.verifyMsPerToken);
    out["verify_fit"] =
        c.noSpeculationArm.empty()
            ? nlohmann::ordered_json(nullptr)
            : nlohmann::ordered_json{{"arm", c.noSpeculationArm}, {"tok_s", number(c.noSpeculationTokS)}};
    out["cycle_ms_by_k"] = numbers(c.cycleMsByK);
    out["predicted_tok_s"] = numbers(c.predictedTokS);
    out["best_k"] = c.bestK;
    if (c.quantized) {
        const auto& q = *c.quantized;
        nlohmann::ordered_json quantized{{"saving_ms", number(q.savingMs)},
                                         {"drafter_ms", number(q.drafterMs)},
                                         {"cycle_ms", number(q.cycleMs)},
                                         {"predicted_tok_s", number(q.predictedTokS)},
                                         {"predicted_change_pct", number(100.0 * q.predictedChange)},
                                         {"predicted_tok_s_by_k", numbers(q.predictedTokSByK)},
                                         {"best_k", q.bestK}};
        if (q.measured) {
            const auto& m = *q.measured;
            quantized["measured_arm"] = m.arm;
            quantized["measured_tok_s"] = number(m.measuredTokS);
            quantized["measured_change_pct"] = number(100.0 * m.measuredChange);
            quantized["residual_pct"] = number(100.0 * m.residual);
            quantized["tokens_per_verify_measured"] = number(m.tokensPerVerify);
            quantized["predicted_tok_s_measured_acceptance"] = number(m.predictedTokS);
            quantized["predicted_change_pct_measured_acceptance"] = number(100.0 * m.predictedChange);
            quantized["residual_pct_measured_acceptance"] = number(100.0 * m.residualMeasuredAcceptance);
        }
        out["quantized"] = std::move(quantized);
    }
    return out;
}

nlohmann::ordered_json speedModelJson(const SpeedModel& model)
{
    nlohmann::ordered_json out;
    out["drafter_ms"] = number(model.drafterMs);
    out["drafter_kind"] = drafterKindName(model.kind);
    out["drafter_kind_basis"] = model.kindBasis;
    out["saving_ms"] = model.savingMs ? number(*model.savingMs) : nlohmann::ordered_json(nullptr);
    out["saving_basis"] = model.savingBasis;
    if (model.streamedBefore > 0) {
        out["streamed_before"] = model.streamedBefore;
        out["streamed_after"] = model.streamedAfter;
    }
    out["assumptions"] = model.assumptions;
    out["warnings"] = nlohmann::ordered_json::array();
    for (const auto& w : model.warnings) {
        out["warnings"].push_back({{"kind", benchWarningKindName(w.kind)}, {"message", w.message}});
    }
    return out;
}

std::string speedModelMarkdown(const SpeedModel& model, int headingLevel)
{
    const std::string h(static_cast<std::size_t>(std::max(1, headingLevel)), '#');
    std::string md = h + " Speed model: predicted decode tok/s against k\n\n";
    md +=
        "| arm | prompt len | k | a_i | τ(k) | T ms | t_D ms (share) | V₀ ms | v ms | D(j) tok/s, j = 0..k | "
        "k* |\n";
    md += "|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|\n";
    for (const auto& c : model.cells) {
        md += "| " + escapeCell(c.arm) + " | " + promptText(c.promptLen) + " | " + std::to_string(c.k) +
              " | " + list(c.acceptance) + " | " + formatSignificant(c.tokensPerVerify.back()) + " | " +
              formatSignificant(c.cycleMs) + " | " + formatSignificant(c.drafterMs) + " (" +
              formatSignificant(100.0 * c.drafterShare(), 3) + " %) | " + formatSignificant(c.verifyMs) +
              " | " + formatSignificant(c.verifyMsPerToken) + " | " + list(c.predictedTokS) + " | " +
              std::to_string(c.bestK) + " |\n";
    }
    const bool anyQuantized = std::any_of(model.cells.begin(), model.cells.end(),
                                          [](const SpeedModelCell& c) { return c.quantized.has_value(); });
    if (anyQuantized) {
        md += "\n" + h + " Speed model: the quantized draft, predicted and measured\n\n";
        md += "| prompt len | D tok/s | Δ ms | T′ ms | D′ predicted | change | D′(j), j = 0..k | k′* | "
              "measured arm | "
              "measured tok/s | measured change | residual | D′ with measured τ′ | change | residual |\n";
        md += "|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& c : model.cells) {
            if (!c.quantized) {
                continue;
            }
            const auto& q = *c.quantized;
            md += "| " + promptText(c.promptLen) + " | " + formatSignificant(c.measuredTokS) + " | " +
                  formatSignificant(q.savingMs) + " | " + formatSignificant(q.cycleMs) + " | " +
                  formatSignificant(q.predictedTokS) + " | " + formatChangePercent(q.predictedChange) +
                  " | " + list(q.predictedTokSByK) + " | " + std::to_string(q.bestK) + " | ";
            if (q.measured) {
                const auto& m = *q.measured;
                md += escapeCell(m.arm) + " | " + formatSignificant(m.measuredTokS) + " | " +
                      formatChangePercent(m.measuredChange) + " | " + formatChangePercent(m.residual) +
                      " | " + formatSignificant(m.predictedTokS) + " | " +
                      formatChangePercent(m.predictedChange) + " | " +
                      formatChangePercent(m.residualMeasuredAcceptance) + " |\n";
            } else {
                md += "- | - | - | - | - | - | - |\n";
            }
        }
    }
    md += "\nAssumptions:\n\n";
    for (const auto& a : model.assumptions) {
        md += "- " + escapeCell(a) + "\n";
    }
    for (const auto& w : model.warnings) {
        md += "- warning: " + escapeCell(w.message) + "\n";
    }
    return md;
}

std::string speedModelCardMarkdown(const SpeedModel& model, int headingLevel)
{
    const bool anyQuantized = std::any_of(model.cells.begin(), model.cells.end(),
                                          [](const SpeedModelCell& c) { return c.quantized.has_value(); });
    if (!anyQuantized) {
        return {};
    }
    const std::string h(static_cast<std::size_t>(std::max(1, headingLevel)), '#');
    std::string md = h + " Predicted and measured speed\n\n";
    md += "Decode tok/s of this draft against the unquantized one ('" + escapeCell(model.baselineArm) +
          "'), predicted by the speed model from the unquantized draft's measurements and, where it was "
          "benchmarked, measured.\n\n";
    md += "| prompt len | " + escapeCell(model.baselineArm) +
          " tok/s | predicted tok/s | predicted change | measured tok/s | measured change | residual | k* → "
          "k′* "
          "|\n";
    md += "|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& c : model.cells) {
        if (!c.quantized) {
            continue;
        }
        const auto& q = *c.quantized;
        md += "| " + promptText(c.promptLen) + " | " + formatSignificant(c.measuredTokS) + " | " +
              formatSignificant(q.predictedTokS) + " | " + formatChangePercent(q.predictedChange) + " | " +
              (q.measured ? formatSignificant(q.measured->measuredTokS) + " | " +
                                formatChangePercent(q.measured->measuredChange) + " | " +
                                formatChangePercent(q.measured->residual)
                          : std::string("not measured | - | -")) +
              " | " + std::to_string(c.bestK) + " → " + std::to_string(q.bestK) + " |\n";
    }
    md += "\nAssumptions of the prediction:\n\n";
    for (const auto& a : model.assumptions) {
        md += "- " + a + "\n";
    }
    md += "\nThe model is only as good as the drafter time it was given (" +
          formatSignificant(model.drafterMs) + " ms per cycle).\n";
    return md;
}

} // namespace spark
