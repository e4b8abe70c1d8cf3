#include "core/bench/cellacceptance.h"

#include <cmath>
#include <cstdlib>
#include <set>

namespace spark {

std::optional<int> declaredSpeculativeTokens(const BenchRecord& r)
{
    if (const auto v = r.metric("num_speculative_tokens"); v && *v >= 0 && *v == std::floor(*v)) {
        return static_cast<int>(*v);
    }
    const auto it = r.extras.find("num_speculative_tokens");
    if (it != r.extras.end()) {
        char* end = nullptr;
        const long v = std::strtol(it->second.c_str(), &end, 10);
        if (end != it->second.c_str() && *end == '\0' && v >= 0) {
            return static_cast<int>(v);
        }
    }
    return std::nullopt;
}

namespace {

double draftsOf(const BenchRecord& r)
{
    if (r.counters && r.counters->hasNumDrafts && r.counters->numDrafts > 0) {
        return r.counters->numDrafts;
    }
    return 0;
}

bool drafted(const BenchRecord& r)
{
    if (!r.perPositionAcceptance.empty()) {
        return true;
    }
    if (r.counters && (r.counters->numDrafts > 0 || r.counters->draftTokens > 0)) {
        return true;
    }
    for (const char* name : {"num_drafts", "num_draft_tokens", "spec_decode_num_drafts"}) {
        if (const auto v = r.metric(name); v && *v > 0) {
            return true;
        }
    }
    const auto al = r.metric(benchmetric::kAcceptanceLength);
    return al && *al > 1.0;
}

} // namespace

CellAcceptance poolCellAcceptance(const std::vector<const BenchRecord*>& records)
{
    CellAcceptance out;
    std::set<std::size_t> lengths;
    std::set<int> declared;
    bool allCounted = true;
    for (const auto* r : records) {
        out.drafted = out.drafted || drafted(*r);
        if (const auto k = declaredSpeculativeTokens(*r)) {
            declared.insert(*k);
        }
        if (!r->perPositionAcceptance.empty()) {
            lengths.insert(r->perPositionAcceptance.size());
            allCounted = allCounted && draftsOf(*r) > 0;
        }
    }
    if (declared.size() > 1) {
        out.problem = "the repeats declare different num_speculative_tokens (" +
                      std::to_string(*declared.begin()) + " and " + std::to_string(*declared.rbegin()) + ")";
    } else if (declared.size() == 1) {
        out.declaredK = *declared.begin();
    }
    if (lengths.empty()) {
        return out;
    }
    if (lengths.size() > 1) {
        out.problem = "the repeats have per-position acceptance for different k (" +
                      std::to_string(*lengths.begin()) + " and " + std::to_string(*lengths.rbegin()) +
                      " positions)";
        return out;
    }
    const std::size_t k = *lengths.begin();
    std::vector<double> sums(k, 0.0);
    double weight = 0;
    for (const auto* r : records) {
        if (r->perPositionAcceptance.empty()) {
            continue;
        }
        const double drafts = allCounted ? draftsOf(*r) : 1.0;
        const bool counts = allCounted && r->counters && r->counters->acceptedPerPosition.size() == k;
        for (std::size_t i = 0; i < k; ++i) {
            sums[i] += counts ? r->counters->acceptedPerPosition[i] : r->perPositionAcceptance[i] * drafts;
        }
        weight += drafts;
    }
    out.weightedByDrafts = allCounted;
    for (const double s : sums) {
        out.perPosition.push_back(s / weight);
    }
    return out;
}

} // namespace spark
