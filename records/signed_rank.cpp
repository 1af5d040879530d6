#include "records/signed_rank.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "records/error.hpp"

namespace atlas::records::stats {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void require_finite(std::span<const double> d, const char* what) {
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (!std::isfinite(d[i]))
      throw RecordError(std::string(what) + ": difference " + std::to_string(i) + " is " +
                        (std::isnan(d[i]) ? "NaN" : "infinite"));
  }
}

/// P(T = t) for t = 0..sum(w) where T = Σ w_i·s_i with independent fair signs s_i ∈ {0,1}: the
/// null distribution of the signed-rank statistic (weights = ranks, or doubled midranks).
std::vector<double> sign_sum_distribution(const std::vector<int>& w) {
  int total = 0;
  for (int x : w) total += x;
  std::vector<double> p(static_cast<std::size_t>(total) + 1, 0.0);
  p[0] = 1.0;
  int reach = 0;
  for (int x : w) {
    for (int t = reach; t >= 0; --t) {
      const double half = 0.5 * p[static_cast<std::size_t>(t)];
      p[static_cast<std::size_t>(t)] = half;
      p[static_cast<std::size_t>(t + x)] += half;
    }
    reach += x;
  }
  return p;
}

}  // namespace

SignedRank wilcoxon_signed_rank(std::span<const double> d) {
  require_finite(d, "wilcoxon_signed_rank");
  std::vector<double> nz;
  for (double x : d)
    if (x != 0) nz.push_back(x);
  SignedRank r;
  r.n = static_cast<int>(nz.size());
  if (nz.empty()) {
    r.method = "empty";
    return r;
  }
  // Midranks of |d|, doubled so tied ranks stay integers.
  std::vector<std::size_t> order(nz.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return std::fabs(nz[a]) < std::fabs(nz[b]); });
  std::vector<int> rank2(nz.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && std::fabs(nz[order[j + 1]]) == std::fabs(nz[order[i]])) ++j;
    const int doubled = static_cast<int>(i + 1 + j + 1);  // 2 × the midrank of ranks i+1..j+1
    for (std::size_t k = i; k <= j; ++k) rank2[order[k]] = doubled;
    i = j + 1;
  }
  int t2 = 0;
  for (std::size_t i = 0; i < nz.size(); ++i)
    if (nz[i] > 0) t2 += rank2[i];
  r.t_plus = 0.5 * t2;
  const std::vector<double> p = sign_sum_distribution(rank2);
  double lower = 0, upper = 0;
  for (std::size_t t = 0; t < p.size(); ++t) {
    if (static_cast<int>(t) <= t2) lower += p[t];
    if (static_cast<int>(t) >= t2) upper += p[t];
  }
  r.p_value = std::min(1.0, 2.0 * std::min(lower, upper));
  r.method = "exact";
  return r;
}

ShiftEstimate hodges_lehmann(std::span<const double> d, double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw RecordError("hodges_lehmann: confidence " + std::to_string(confidence) + " is not in (0,1)");
  require_finite(d, "hodges_lehmann");
  ShiftEstimate e;
  e.n = static_cast<int>(d.size());
  const double tail = (1 - confidence) / 2;
  e.min_n = static_cast<int>(std::ceil(std::log2(1 / tail)));
  e.ci = {-kInf, kInf};
  if (d.empty()) {
    e.estimate = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  std::vector<double> walsh;
  walsh.reserve(d.size() * (d.size() + 1) / 2);
  for (std::size_t i = 0; i < d.size(); ++i)
    for (std::size_t j = i; j < d.size(); ++j) walsh.push_back(0.5 * (d[i] + d[j]));
  std::sort(walsh.begin(), walsh.end());
  e.estimate = median(walsh);
  std::vector<int> ranks(d.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i + 1);
  const std::vector<double> p = sign_sum_distribution(ranks);
  // Largest C >= 1 with P(T+ <= C-1) <= tail.
  double cdf = 0;
  std::size_t c = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (cdf + p[k] > tail) break;
    cdf += p[k];
    c = k + 1;
  }
  if (c == 0) return e;
  const std::size_t m = walsh.size();
  e.ci = {walsh[c - 1], walsh[m - c]};
  e.ci_finite = true;
  e.achieved_confidence = 1 - 2 * cdf;
  return e;
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw RecordError("normal_quantile: p " + std::to_string(p) + " is not in (0,1)");
  // Φ(z) = erfc(−z/√2)/2 is increasing: bisect on [−40, 40].
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace atlas::records::stats
