#pragma once
// Change points in one metric's history: E-divisive means, the method MongoDB's performance CI
// (Daly et al., "The Use of Change Point Detection to Identify Software Performance
// Regressions in a Continuous Integration System", ICPE 2020; github.com/mongodb/
// signal-processing-algorithms) and DataStax's Hunter use, after Matteson & James, "A
// Nonparametric Approach for Multiple Change Point Analysis of Multivariate Data", JASA 109
// (2014), with alpha = 1 (absolute differences, robust to the outliers a shared box produces).
//
// For a segment split at tau into X (m points) and Y (n points):
//   E = 2/(mn) sum|x_i - y_j| - 2/(m(m-1)) sum_{i<k}|x_i - x_k| - 2/(n(n-1)) sum_{j<k}|y_j - y_k|
//   q = mn/(m+n) * E
// The best split of every current segment is found, the one with the largest q is proposed,
// and a permutation test judges it: the values are shuffled within each current segment
// (Matteson & James, section 3.3), the largest q over all segments recomputed, and
// p = (#{shuffles with q >= observed} + 1) / (permutations + 1). A proposal with p <= max_p
// becomes a change point and the search goes on in the new segments; the first that does not
// ends it. The shuffles come from std::mt19937_64 (its output is fixed by the C++ standard) with
// the index drawn here, not by std::shuffle (whose algorithm is unspecified), so one seed gives
// the same answer on every platform.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace atlas::trends {

struct ChangePointSettings {
  double max_p = 0.001;      ///< significance level of the permutation test (0.01 gave 5 false steps in 200 flat histories)
  int permutations = 999;    ///< shuffles per proposal (the smallest p possible is 1/(permutations+1))
  std::uint64_t seed = 1;    ///< of the shuffles: the same series and seed give the same points
  int min_segment = 4;       ///< points on each side of a change point (>= 2: the formula needs pairs)
};

struct ChangePoint {
  std::size_t index = 0;  ///< the first point of the new level (the change lies between index-1 and index)
  double q = 0;           ///< the statistic above, in the series' unit
  double p_value = 1;     ///< of the permutation test
};

/// Change points of `series` (one value per commit, oldest first), by index. Fewer than
/// 2 * min_segment points give none. Throws TrendError when a setting is out of range
/// (min_segment < 2, permutations < 1, max_p outside (0, 1)) or a value is not finite.
std::vector<ChangePoint> e_divisive_means(std::span<const double> series, const ChangePointSettings& settings = {});

}  // namespace atlas::trends
