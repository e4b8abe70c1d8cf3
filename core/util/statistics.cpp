#include "core/util/statistics.h"

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace spark {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

SampleSummary summarize(std::span<const double> values)
{
    SampleSummary s;
    s.n = values.size();
    if (values.empty()) {
        s.mean = s.sd = s.median = s.cv = s.min = s.max = kNaN;
        return s;
    }
    double sum = 0;
    for (const double v : values) {
        sum += v;
    }
    s.mean = sum / static_cast<double>(s.n);
    // Two-pass variance: the one-pass Σx² − n·x̄² formula cancels badly for tok/s near 45 ± 0.3.
    double squares = 0;
    for (const double v : values) {
        squares += (v - s.mean) * (v - s.mean);
    }
    s.sd = s.n >= 2 ? std::sqrt(squares / static_cast<double>(s.n - 1)) : kNaN;
    std::vector<double> sorted(values.begin(), values.end());
    std::sort(sorted.begin(), sorted.end());
    const std::size_t mid = s.n / 2;
    s.median = s.n % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2.0;
    s.min = sorted.front();
    s.max = sorted.back();
    s.cv = s.n >= 2 && s.mean != 0 ? s.sd / std::abs(s.mean) : kNaN;
    return s;
}

SampleSummary summaryFromMoments(std::size_t n, double mean, double sd)
{
    SampleSummary s;
    s.n = n;
    s.mean = mean;
    s.sd = n >= 2 ? sd : kNaN;
    s.median = s.min = s.max = kNaN;
    s.cv = n >= 2 && mean != 0 ? sd / std::abs(mean) : kNaN;
    return s;
}

double studentTCdf(double t, double df)
{
    return boost::math::cdf(boost::math::students_t(df), t);
}

double studentTQuantile(double p, double df)
{
    return boost::math::quantile(boost::math::students_t(df), p);
}

double normalQuantile(double p)
{
    if (p <= 0) {
        return -kInf;
    }
    if (p >= 1) {
        return kInf;
    }
    return boost::math::quantile(boost::math::normal(), p);
}

double sigmaFromTwoSidedP(double p)
{
    if (std::isnan(p)) {
        return kNaN;
    }
    if (p >= 1) {
        return 0.0;
    }
    return -normalQuantile(p / 2.0);
}

double twoSidedPValue(double t, double df)
{
    if (std::isnan(t) || std::isnan(df)) {
        return kNaN;
    }
    if (std::isinf(t)) {
        return 0.0;
    }
    return boost::math::ibeta(df / 2.0, 0.5, df / (df + t * t));
}

WelchResult welchTest(const SampleSummary& baseline, const SampleSummary& candidate, double confidence)
{
    WelchResult r;
    r.confidence = confidence;
    r.diff = candidate.mean - baseline.mean;
    r.deltaPercent = baseline.mean != 0 ? 100.0 * r.diff / baseline.mean : kNaN;
    if (baseline.n < 2 || candidate.n < 2) {
        r.valid = false;
        r.se = r.df = r.t = r.tCritical = r.ciLow = r.ciHigh = r.p = r.sigma = kNaN;
        r.deltaPercentCiLow = r.deltaPercentCiHigh = kNaN;
        return r;
    }
    r.valid = true;
    const double va = baseline.sd * baseline.sd / static_cast<double>(baseline.n);
    const double vb = candidate.sd * candidate.sd / static_cast<double>(candidate.n);
    r.se = std::sqrt(va + vb);
    if (r.se == 0) {
        // Both arms constant: no t distribution; the difference is either certain or nil (bench-formats
        // §4.1).
        r.df = kNaN;
        r.tCritical = kNaN;
        r.t = r.diff == 0 ? 0.0 : std::copysign(kInf, r.diff);
        r.p = r.diff == 0 ? 1.0 : 0.0;
        r.sigma = r.diff == 0 ? 0.0 : kInf;
        r.ciLow = r.ciHigh = r.diff;
    } else {
        r.df =
            (va + vb) * (va + vb) /
            (va * va / static_cast<double>(baseline.n - 1) + vb * vb / static_cast<double>(candidate.n - 1));
        r.t = r.diff / r.se;
        r.tCritical = studentTQuantile(0.5 + confidence / 2.0, r.df);
        r.ciLow = r.diff - r.tCritical * r.se;
        r.ciHigh = r.diff + r.tCritical * r.se;
        r.p = twoSidedPValue(r.t, r.df);
        r.sigma = sigmaFromTwoSidedP(r.p);
    }
    r.deltaPercentCiLow = baseline.mean != 0 ? 100.0 * r.ciLow / baseline.mean : kNaN;
    r.deltaPercentCiHigh = baseline.mean != 0 ? 100.0 * r.ciHigh / baseline.mean : kNaN;
    return r;
}

ProportionInterval wilsonInterval(double p, double n)
{
    if (n <= 0) {
        return {0, 1};
    }
    const double z2 = kZ95 * kZ95;
    const double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
    const double half = kZ95 * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

MeanInterval pairedMeanInterval(std::span<const double> differences)
{
    const auto n = static_cast<double>(differences.size());
    MeanInterval out;
    out.mean = n > 0 ? std::accumulate(differences.begin(), differences.end(), 0.0) / n : 0;
    double var = 0;
    for (const double v : differences) {
        var += (v - out.mean) * (v - out.mean);
    }
    const double se = n > 1 ? std::sqrt(var / (n - 1) / n) : 0;
    out.low = out.mean - kZ95 * se;
    out.high = out.mean + kZ95 * se;
    return out;
}

double interpolatedQuantile(std::vector<float> values, double q)
{
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const double pos = q * static_cast<double>(values.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const auto hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

} // namespace spark
