#pragma once
// The Wilcoxon signed-rank test on paired differences and the Hodges–Lehmann shift estimate
// with its distribution-free confidence interval (Tukey's interval from the Walsh averages).
// This is the one-sample/paired test the interleaved A/B judgement (records/paired_judgement.hpp)
// uses: per round one difference head−base, so drift that hits both sides of a round cancels.
//
// Sources: Wilcoxon (1945); Hollander, Wolfe & Chicken, Nonparametric Statistical Methods, 3rd ed.
// (2014), §3.1 (test), §3.2 (Hodges–Lehmann estimator = median of the Walsh averages), §3.3 (the
// interval [W_(C), W_(M+1−C)] with C from the exact null distribution of T+). The p-value agrees
// with scipy.stats.wilcoxon(d, zero_method='wilcox', method='exact') when there are no ties; with
// ties in |d| this computes the exact conditional (permutation) distribution of the tied midranks,
// which scipy approximates by a normal.
#include <span>
#include <string>

#include "records/stats.hpp"

namespace atlas::records::stats {

struct SignedRank {
  int n = 0;              ///< nonzero differences used (zeros are dropped: Wilcoxon's method)
  double t_plus = 0;      ///< sum of the (mid)ranks of |d| over the positive differences
  double p_value = 1;     ///< two-sided, exact: 2·min(P(T+ <= t), P(T+ >= t)), clipped to 1
  std::string method;     ///< "exact" | "empty" (no nonzero difference)
};

/// Two-sided Wilcoxon signed-rank test of "the differences are symmetric about 0".
/// Exact for every n (dynamic programming over the 2^n sign assignments, O(n^3) time).
/// Throws RecordError when a difference is NaN or infinite.
SignedRank wilcoxon_signed_rank(std::span<const double> d);

struct ShiftEstimate {
  int n = 0;                     ///< differences used (all of them: zeros are Walsh averages too)
  double estimate = 0;           ///< Hodges–Lehmann: the median of the n(n+1)/2 Walsh averages
  Interval ci;                   ///< [W_(C), W_(M+1−C)]; ±inf when n is too small for `confidence`
  bool ci_finite = false;        ///< false when even [min, max] has less than `confidence` coverage
  double achieved_confidence = 0;  ///< the exact coverage 1 − 2·P(T+ <= C−1) of the interval
  int min_n = 0;                 ///< the smallest n for which this confidence is reachable
};

/// Hodges–Lehmann estimate of the centre of symmetry of `d` and its two-sided interval at (at
/// least) `confidence`, from the exact null distribution of T+ (no ties assumed, as in
/// Hollander & Wolfe and R's wilcox.test(conf.int = TRUE, exact = TRUE)). Empty input ->
/// estimate NaN, interval ±inf. Throws RecordError when confidence is not in (0,1) or a value is
/// NaN or infinite.
ShiftEstimate hodges_lehmann(std::span<const double> d, double confidence);

/// The standard normal quantile Φ⁻¹(p) for p in (0,1) (bisection on erfc, |error| < 1e-12).
/// Throws RecordError outside (0,1).
double normal_quantile(double p);

}  // namespace atlas::records::stats
