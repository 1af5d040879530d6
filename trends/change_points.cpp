#include "trends/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "trends/error.hpp"

namespace atlas::trends {
namespace {

struct Split {
  std::size_t tau = 0;  ///< absolute index of the first point right of the split
  double q = -1;        ///< -1: the segment is too short to split
};

// The best split of x[begin, end) in O(L^2): within-left sums grow by one column, within-right
// sums shrink by one row, the cross sum is the rest of the total.
Split best_split(std::span<const double> x, std::size_t begin, std::size_t end, std::size_t min_segment,
                 std::vector<double>& left, std::vector<double>& right) {
  Split best;
  const std::size_t len = end - begin;
  if (len < 2 * min_segment) return best;
  // left[t] = sum over pairs inside x[begin, begin+t); right[t] = pairs inside x[begin+t, end).
  left.assign(len + 1, 0.0);
  right.assign(len + 1, 0.0);
  for (std::size_t t = 1; t < len; ++t) {
    double col = 0;
    for (std::size_t i = 0; i < t; ++i) col += std::fabs(x[begin + i] - x[begin + t]);
    left[t + 1] = left[t] + col;
  }
  for (std::size_t t = len - 1; t-- > 0;) {
    double row = 0;
    for (std::size_t k = t + 1; k < len; ++k) row += std::fabs(x[begin + t] - x[begin + k]);
    right[t] = right[t + 1] + row;
  }
  const double total = left[len];
  for (std::size_t t = min_segment; t + min_segment <= len; ++t) {
    const double m = static_cast<double>(t), n = static_cast<double>(len - t);
    const double cross = total - left[t] - right[t];
    const double e = 2.0 / (m * n) * cross - 2.0 / (m * (m - 1)) * left[t] - 2.0 / (n * (n - 1)) * right[t];
    const double q = m * n / (m + n) * e;
    if (q > best.q) best = {begin + t, q};
  }
  return best;
}

// The proposal: the largest best split over all segments (bounds[i], bounds[i+1]).
Split propose(std::span<const double> x, const std::vector<std::size_t>& bounds, std::size_t min_segment,
              std::vector<double>& left, std::vector<double>& right) {
  Split best;
  for (std::size_t s = 0; s + 1 < bounds.size(); ++s) {
    const Split c = best_split(x, bounds[s], bounds[s + 1], min_segment, left, right);
    if (c.q > best.q) best = c;
  }
  return best;
}

// Uniform integer in [0, n) from raw mt19937_64 output, without modulo bias (rejection).
std::size_t uniform_index(std::mt19937_64& rng, std::size_t n) {
  const std::uint64_t range = static_cast<std::uint64_t>(n);
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  std::uint64_t v = rng();
  while (v >= limit) v = rng();
  return static_cast<std::size_t>(v % range);
}

void shuffle_within(std::vector<double>& x, std::size_t begin, std::size_t end, std::mt19937_64& rng) {
  for (std::size_t i = end - begin; i > 1; --i) std::swap(x[begin + i - 1], x[begin + uniform_index(rng, i)]);
}

}  // namespace

std::vector<ChangePoint> e_divisive_means(std::span<const double> series, const ChangePointSettings& s) {
  if (s.min_segment < 2)
    throw TrendError("change points: min_segment must be at least 2 (value: " + std::to_string(s.min_segment) + ")");
  if (s.permutations < 1)
    throw TrendError("change points: permutations must be at least 1 (value: " + std::to_string(s.permutations) + ")");
  if (!(s.max_p > 0 && s.max_p < 1))
    throw TrendError("change points: max_p must lie in (0, 1) (value: " + std::to_string(s.max_p) + ")");
  for (std::size_t i = 0; i < series.size(); ++i)
    if (!std::isfinite(series[i]))
      throw TrendError("change points: value " + std::to_string(i) + " is not finite (" + std::to_string(series[i]) + ")");

  const auto min_segment = static_cast<std::size_t>(s.min_segment);
  std::vector<ChangePoint> found;
  std::vector<std::size_t> bounds = {0, series.size()};
  std::vector<double> left, right, shuffled;
  std::mt19937_64 rng(s.seed);
  for (;;) {
    const Split proposal = propose(series, bounds, min_segment, left, right);
    if (proposal.q < 0) break;
    int at_least = 0;
    for (int r = 0; r < s.permutations; ++r) {
      shuffled.assign(series.begin(), series.end());
      for (std::size_t b = 0; b + 1 < bounds.size(); ++b) shuffle_within(shuffled, bounds[b], bounds[b + 1], rng);
      if (propose(shuffled, bounds, min_segment, left, right).q >= proposal.q) ++at_least;
    }
    const double p = (at_least + 1.0) / (s.permutations + 1.0);
    if (p > s.max_p) break;
    found.push_back({proposal.tau, proposal.q, p});
    bounds.insert(std::upper_bound(bounds.begin(), bounds.end(), proposal.tau), proposal.tau);
  }
  std::sort(found.begin(), found.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return found;
}

}  // namespace atlas::trends
