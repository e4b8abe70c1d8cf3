#include "core/forward/acceptancerates.h"

#include <stdexcept>

namespace spark {

nlohmann::ordered_json acceptanceRatesJson(const AcceptanceJob& job, const AcceptanceRun& run,
                                           std::optional<RatesOf> of)
{
    const bool haveQuantized = job.replay ? run.replayQuantized.has_value() : run.summary.paired;
    const RatesOf which = of.value_or(haveQuantized ? RatesOf::Quantized : RatesOf::Bf16);
    if (which == RatesOf::Quantized && !haveQuantized) {
        throw std::invalid_argument("the quantized draft's rates need a quantized draft (plan options or a "
                                    "quantized checkpoint)");
    }
    const bool quantized = which == RatesOf::Quantized;
    // A replayed loop is a single-draft summary: its own rates are its BF16 column.
    const auto& summary = job.replay ? (quantized ? *run.replayQuantized : *run.replayBase) : run.summary;
    const bool quantColumn = quantized && !job.replay;
    nlohmann::ordered_json rates = nlohmann::ordered_json::array();
    for (const auto& p : summary.positions) {
        rates.push_back(quantColumn ? p.acceptQuant : p.acceptBase);
    }
    nlohmann::ordered_json j;
    j["speculative_config"] = {{"num_speculative_tokens", summary.k},
                               {"rejection_sample_method", "synthetic"},
                               {"synthetic_acceptance_rates", rates}};
    j["source"] = {{"format", "sparkulator-acceptance-rates"},
                   {"version", 1},
                   {"rates_of", quantized ? "quantized" : "bf16"},
                   {"drafted_by", quantized ? run.quantizedName : run.baseName},
                   {"k", summary.k},
                   {"anchors", summary.anchors},
                   {"tau", quantColumn ? summary.tauQuant : summary.tauBase},
                   {"measured_on", job.replay ? "replayed online loop" : "paired anchors"},
                   {"temperature", job.options.temperature},
                   {"draft_sampling", draftSamplingName(job.options.drafting)},
                   {"draft", job.draft.string()},
                   {"capture", job.capture.string()}};
    return j;
}

} // namespace spark
