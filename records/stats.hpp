#pragma once
// Statistics over raw samples: order statistics, moments, a bootstrap CI of the median and the
// Mann–Whitney U test. Pure functions over std::span<const double>; no allocation escapes.
//
// Conventions follow the field: percentiles are numpy's default ('linear', Hyndman & Fan type 7),
// stdev is the sample standard deviation (n-1, as pytest-benchmark, Google Benchmark and asv
// report), and the U test reproduces scipy.stats.mannwhitneyu(x, y, alternative='two-sided',
// method='auto') — the test asv and Google Benchmark's compare.py use to call a change real.
#include <cstdint>
#include <span>
#include <string>

namespace atlas::records::stats {

/// Median (= percentile 50). NaN for empty input. Throws RecordError when a sample is NaN.
double median(std::span<const double> x);
/// median(x), or `if_empty` for empty input: for a figure printed or recorded as a number even
/// when nothing was sampled (a mode that timed no step, a benchmark run with no repetitions).
double median_or(std::span<const double> x, double if_empty);

/// p in [0,100]; linear interpolation between closest ranks (Hyndman & Fan type 7, numpy's
/// default 'linear'): with x sorted, h = (n-1)·p/100, result = x[⌊h⌋] + (h-⌊h⌋)·(x[⌊h⌋+1]-x[⌊h⌋]).
/// NaN for empty input. Throws RecordError when p is outside [0,100] or a sample is NaN.
double percentile(std::span<const double> x, double p);

/// Arithmetic mean; NaN for empty input.
double mean(std::span<const double> x);

/// Sample standard deviation (divisor n-1); 0 for n<2.
double stdev(std::span<const double> x);

struct Interval {
  double lo = 0, hi = 0;
};

/// Percentile bootstrap CI of the median (Efron & Tibshirani 1993, ch. 13): `resamples` resamples
/// with replacement of size n, the median of each, then the (1-c)/2 and (1+c)/2 type-7
/// percentiles of those medians. Each resample's median is drawn directly from its exact
/// distribution (the order statistics of n uniform indices into the sorted data are Beta
/// distributed), which is the same bootstrap at O(1) per resample instead of O(n).
/// Fixed seed => reproducible: the generator is std::mt19937_64 (output fixed by the C++
/// standard) and the variates are computed here, not by the implementation-defined
/// std::*_distribution classes.
/// Empty input -> {NaN, NaN}; n = 1 -> {x0, x0}. Throws RecordError when confidence is not in
/// (0,1), resamples < 1 or a sample is NaN.
Interval bootstrap_median_ci(std::span<const double> x, double confidence = 0.95, int resamples = 2000,
                             std::uint64_t seed = 42);

struct MannWhitney {
  double u1 = 0;        ///< U statistic of x: R1 - n1(n1+1)/2 (R1 = rank sum of x, ties averaged)
  double p_value = 1;   ///< two-sided
  std::string method;   ///< "exact" | "asymptotic" | "identical" | "empty"
};

/// Two-sided Mann–Whitney U test of x vs y, as scipy.stats.mannwhitneyu(x, y,
/// alternative='two-sided', method='auto') (scipy/stats/_mannwhitneyu.py, _mwu_choose_method):
/// the exact null distribution when there are no ties and at least one sample has n <= 8;
/// otherwise the normal approximation with tie correction and continuity correction
/// (z = (|U1 - n1·n2/2| - 0.5) / σ, σ² = n1·n2/12·((n+1) - Σ(t³-t)/(n(n-1))), p = 2·sf(z)).
/// The exact p is 2·P(U >= max(U1, U2)), clipped to 1.
/// All values identical => p = 1, method "identical". x or y empty => u1 = NaN, p = 1, method
/// "empty" (no evidence either way; callers gate on sample counts first).
/// Throws RecordError when a sample is NaN. ±inf are ordinary (largest/smallest) values.
MannWhitney mann_whitney_u(std::span<const double> x, std::span<const double> y);

}  // namespace atlas::records::stats
