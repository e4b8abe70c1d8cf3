#pragma once

#include <cstddef>
#include <span>
#include <vector>

// The statistics every part of the product reports with: benchmark cells and Welch comparisons
// (bench-formats §4), and the paired acceptance figures of the offline forward and the allocator.
namespace spark {

/// Φ⁻¹(0.975): the normal 95 % two-sided quantile of the acceptance intervals.
inline constexpr double kZ95 = 1.959963984540054;

/// @brief Descriptive statistics of one cell's repeats (bench-formats.md §4.1).
struct SampleSummary
{
    std::size_t n = 0;
    double mean = 0;
    double sd = 0;     ///< sample standard deviation (n − 1); NaN when n < 2
    double median = 0; ///< mean of the two middle values for even n; NaN when unknown (summary-only input)
    double cv = 0;     ///< sd / |mean| (a fraction); NaN when n < 2 or mean = 0
    double min = 0;
    double max = 0;
};

/// @brief n, mean, sample sd, median, CV, min and max. Empty input gives n = 0 and NaNs.
SampleSummary summarize(std::span<const double> values);

/// @brief A summary from published moments only (no median), e.g. to check against a textbook.
SampleSummary summaryFromMoments(std::size_t n, double mean, double sd);

/// @brief Welch's unequal-variance t test of candidate − baseline (bench-formats.md §4.1).
struct WelchResult
{
    /// False when either arm has n < 2 (no variance): only diff and deltaPercent are meaningful ("n/a").
    bool valid = false;
    double confidence = 0.95;
    double diff = 0;               ///< mean(candidate) − mean(baseline)
    double se = 0;                 ///< sqrt(sA²/nA + sB²/nB)
    double df = 0;                 ///< Welch–Satterthwaite ν (non-integer); NaN when se = 0
    double t = 0;                  ///< diff / se; ±Inf when se = 0 and diff ≠ 0, 0 when both are 0
    double tCritical = 0;          ///< Student-t quantile at (1 + confidence) / 2 and ν
    double ciLow = 0;              ///< diff − t*·se
    double ciHigh = 0;             ///< diff + t*·se
    double p = 1;                  ///< two-sided, I_{ν/(ν+t²)}(ν/2, ½) (no 1 − CDF cancellation)
    double sigma = 0;              ///< Gaussian-equivalent significance −Φ⁻¹(p/2), not |t|
    double deltaPercent = 0;       ///< 100·diff / mean(baseline)
    double deltaPercentCiLow = 0;  ///< 100·ciLow / mean(baseline), treating the baseline mean as exact
    double deltaPercentCiHigh = 0; ///< 100·ciHigh / mean(baseline)

    /// @brief True when the CI excludes zero (p < 1 − confidence).
    bool significant() const { return valid && p < 1.0 - confidence; }
};

/// @brief Welch test of @p candidate − @p baseline at the given two-sided confidence.
WelchResult welchTest(const SampleSummary& baseline, const SampleSummary& candidate,
                      double confidence = 0.95);

/// @brief Student-t CDF F(t; ν) for non-integer ν > 0 (Boost.Math).
double studentTCdf(double t, double df);
/// @brief Student-t quantile t_{p,ν} for non-integer ν > 0 (Boost.Math).
double studentTQuantile(double p, double df);
/// @brief Standard normal quantile Φ⁻¹(p); ±Inf at 0 and 1.
double normalQuantile(double p);
/// @brief −Φ⁻¹(p/2): the Gaussian-equivalent σ of a two-sided p, computed in the lower tail so that
/// p < 1e-16 does not round to ∞ (bench-formats.md §4.1).
double sigmaFromTwoSidedP(double p);
/// @brief Two-sided p of a t statistic: I_{ν/(ν+t²)}(ν/2, ½).
double twoSidedPValue(double t, double df);

/// @brief A 95 % interval of a proportion.
struct ProportionInterval
{
    double low = 0;
    double high = 1;
};

/// @brief Wilson score interval of a proportion @p p seen in @p n trials (z = kZ95); [0, 1] when n = 0.
ProportionInterval wilsonInterval(double p, double n);

/// @brief The mean of paired differences with its 95 % normal-approximation interval.
struct MeanInterval
{
    double mean = 0;
    double low = 0;
    double high = 0;
};

/// @brief Mean of @p differences ± kZ95 · sd/√n (two-pass variance); 0 for an empty input and a zero-width
/// interval for one value.
MeanInterval pairedMeanInterval(std::span<const double> differences);

/// @brief The @p q quantile by linear interpolation between order statistics (q in [0, 1]); 0 when empty.
double interpolatedQuantile(std::vector<float> values, double q);

} // namespace spark
