#include "core/bench/specdecodecounters.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace spark {

SpecDecodeCounters SpecDecodeCounters::fromTotals(std::optional<double> drafts, double draftTokens,
                                                  double acceptedTokens)
{
    SpecDecodeCounters counters;
    counters.hasNumDrafts = drafts.has_value();
    counters.numDrafts = drafts.value_or(0);
    counters.draftTokens = draftTokens;
    counters.acceptedTokens = acceptedTokens;
    return counters;
}

double SpecDecodeCounters::acceptanceRate() const
{
    return draftTokens > 0 ? acceptedTokens / draftTokens : std::numeric_limits<double>::quiet_NaN();
}

double SpecDecodeCounters::meanAcceptanceLength() const
{
    return hasNumDrafts && numDrafts > 0 ? 1.0 + acceptedTokens / numDrafts
                                         : std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> SpecDecodeCounters::perPositionRates() const
{
    std::vector<double> rates;
    if (!hasNumDrafts || numDrafts <= 0) {
        return rates;
    }
    rates.reserve(acceptedPerPosition.size());
    for (const double accepted : acceptedPerPosition) {
        rates.push_back(accepted / numDrafts);
    }
    return rates;
}

SpecDecodeCounters& SpecDecodeCounters::operator+=(const SpecDecodeCounters& other)
{
    numDrafts += other.numDrafts;
    draftTokens += other.draftTokens;
    acceptedTokens += other.acceptedTokens;
    hasNumDrafts = hasNumDrafts && other.hasNumDrafts;
    acceptedPerPosition.resize(std::max(acceptedPerPosition.size(), other.acceptedPerPosition.size()), 0.0);
    for (std::size_t i = 0; i < other.acceptedPerPosition.size(); ++i) {
        acceptedPerPosition[i] += other.acceptedPerPosition[i];
    }
    return *this;
}

std::vector<std::string> SpecDecodeCounters::invariantViolations() const
{
    std::vector<std::string> problems;
    const auto number = [](double v) {
        // Counters are integers; print them without a fractional part so messages match the files.
        return v == static_cast<double>(static_cast<long long>(v)) ? std::to_string(static_cast<long long>(v))
                                                                   : std::to_string(v);
    };
    if (!acceptedPerPosition.empty()) {
        double sum = 0;
        for (const double v : acceptedPerPosition) {
            sum += v;
        }
        const double slack = 0.5 * static_cast<double>(acceptedPerPosition.size());
        if (std::abs(sum - acceptedTokens) > slack) {
            problems.push_back("per-position accepted tokens sum to " + number(sum) +
                               " but accepted tokens are " + number(acceptedTokens));
        }
        for (std::size_t i = 1; i < acceptedPerPosition.size(); ++i) {
            if (acceptedPerPosition[i] > acceptedPerPosition[i - 1] + 0.5) {
                problems.push_back("position " + std::to_string(i) + " accepted " +
                                   number(acceptedPerPosition[i]) + " tokens, more than position " +
                                   std::to_string(i - 1) + " (" + number(acceptedPerPosition[i - 1]) +
                                   "); acceptance is a prefix");
            }
        }
    }
    if (acceptedTokens > draftTokens + 0.5) {
        problems.push_back("accepted tokens (" + number(acceptedTokens) + ") exceed draft tokens (" +
                           number(draftTokens) + ")");
    }
    if (hasNumDrafts && !acceptedPerPosition.empty()) {
        const double k = static_cast<double>(acceptedPerPosition.size());
        if (draftTokens > k * numDrafts + 0.5) {
            problems.push_back("draft tokens (" + number(draftTokens) + ") exceed k x drafts (" +
                               std::to_string(acceptedPerPosition.size()) + " x " + number(numDrafts) + ")");
        }
    }
    for (const double v : {numDrafts, draftTokens, acceptedTokens}) {
        if (v < 0) {
            problems.push_back("a counter difference is negative (" + number(v) + ")");
            break;
        }
    }
    return problems;
}

} // namespace spark
