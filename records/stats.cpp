#include "records/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#include "records/error.hpp"

namespace atlas::records::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// NaN breaks the strict weak ordering std::sort needs; reject it before sorting.
void require_no_nan(std::span<const double> x, const char* what) {
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      throw RecordError(std::string(what) + ": sample " + std::to_string(i) + " is NaN");
    }
  }
}

std::vector<double> sorted_copy(std::span<const double> x, const char* what) {
  require_no_nan(x, what);
  std::vector<double> s(x.begin(), x.end());
  std::sort(s.begin(), s.end());
  return s;
}

// Type-7 percentile of already sorted data.
double percentile_sorted(const std::vector<double>& s, double p) {
  if (s.empty()) return kNaN;
  const double h = (static_cast<double>(s.size()) - 1.0) * p / 100.0;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= s.size()) return s.back();
  const double frac = h - static_cast<double>(lo);
  // numpy's _lerp form: exact at both ends and monotone.
  const double a = s[lo], b = s[lo + 1];
  const double diff = b - a;
  return frac >= 0.5 ? b - diff * (1.0 - frac) : a + diff * frac;
}

// Random variates built only from std::mt19937_64 output (fixed by the C++ standard), so a seed
// gives the same numbers on every standard library; std::*_distribution are not specified that
// precisely.
double uniform_open01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
}

double standard_normal(std::mt19937_64& rng) {  // Box–Muller
  const double u1 = uniform_open01(rng), u2 = uniform_open01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Gamma(a, 1) for a >= 1: Marsaglia & Tsang, "A simple method for generating gamma variables",
// ACM TOMS 26(3), 2000.
double gamma_variate(std::mt19937_64& rng, double a) {
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double z = standard_normal(rng);
    const double t = 1.0 + c * z;
    if (t <= 0.0) continue;
    const double v = t * t * t;
    const double u = uniform_open01(rng);
    if (u < 1.0 - 0.0331 * z * z * z * z) return d * v;
    if (std::log(u) < 0.5 * z * z + d * (1.0 - v + std::log(v))) return d * v;
  }
}

// Beta(a, b) for a, b >= 1 as Ga / (Ga + Gb).
double beta(std::mt19937_64& rng, double a, double b) {
  const double ga = gamma_variate(rng, a), gb = gamma_variate(rng, b);
  return ga / (ga + gb);
}

// Ranks 1..n with ties averaged (scipy.stats.rankdata 'average'); also Σ(t³ - t) over tie groups.
struct Ranked {
  std::vector<double> ranks;  // in input order
  double tie_term = 0;
  bool has_ties = false;
};

Ranked rank_average(const std::vector<double>& v) {
  const std::size_t n = v.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  Ranked r;
  r.ranks.assign(n, 0.0);
  std::size_t i = 0;
  while (i < n) {
    std::size_t j = i + 1;
    while (j < n && v[order[j]] == v[order[i]]) ++j;
    const double t = static_cast<double>(j - i);
    const double avg = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) r.ranks[order[k]] = avg;
    if (j - i > 1) {
      r.has_ties = true;
      r.tie_term += t * t * t - t;
    }
    i = j;
  }
  return r;
}

// Null distribution of U for sample sizes m <= n without ties: the number of arrangements with
// U = k is the coefficient of q^k in the Gaussian binomial [m+n choose m]_q (Mann & Whitney 1947;
// Andrews, "The Theory of Partitions", 3.3). Built as Π_{k=1..m} (1 - q^{n+k}) / (1 - q^k), each
// partial product being itself a Gaussian binomial, so every intermediate is a polynomial.
// Returned as probabilities (divided by C(m+n, m)). long double keeps counts exact up to 2^64
// and the absolute error of larger tails far below any significance level.
std::vector<long double> mwu_null_pmf(std::size_t m, std::size_t n) {
  if (m > n) std::swap(m, n);
  std::vector<long double> p(m * n + m + 1, 0.0L);
  p[0] = 1.0L;
  std::size_t deg = 0;
  for (std::size_t k = 1; k <= m; ++k) {
    const std::size_t a = n + k;
    for (std::size_t i = deg + a; i >= a; --i) p[i] -= p[i - a];
    deg += a;
    for (std::size_t i = k; i <= deg; ++i) p[i] += p[i - k];
    deg -= k;
    // The division is exact; clear the (zero in exact arithmetic) terms above the new degree.
    std::fill(p.begin() + static_cast<std::ptrdiff_t>(deg + 1), p.end(), 0.0L);
  }
  p.resize(m * n + 1);
  long double total = 0.0L;
  for (long double c : p) total += c;
  for (long double& c : p) c /= total;
  return p;
}

}  // namespace

double percentile(std::span<const double> x, double p) {
  if (!(p >= 0.0 && p <= 100.0)) {
    std::ostringstream os;
    os << "percentile: p = " << p << " is outside [0, 100]";
    throw RecordError(os.str());
  }
  return percentile_sorted(sorted_copy(x, "percentile"), p);
}

double median(std::span<const double> x) { return percentile(x, 50.0); }
double median_or(std::span<const double> x, double if_empty) { return x.empty() ? if_empty : median(x); }

double mean(std::span<const double> x) {
  if (x.empty()) return kNaN;
  // Welford-style running mean: no overflow for large magnitudes.
  double m = 0.0;
  std::size_t i = 0;
  for (double v : x) m += (v - m) / static_cast<double>(++i);
  return m;
}

double stdev(std::span<const double> x) {
  if (x.size() < 2) return 0.0;
  const double m = mean(x);
  double ss = 0.0;
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

Interval bootstrap_median_ci(std::span<const double> x, double confidence, int resamples, std::uint64_t seed) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    std::ostringstream os;
    os << "bootstrap_median_ci: confidence = " << confidence << " is not in (0, 1)";
    throw RecordError(os.str());
  }
  if (resamples < 1) {
    throw RecordError("bootstrap_median_ci: resamples = " + std::to_string(resamples) + " must be >= 1");
  }
  const std::vector<double> s = sorted_copy(x, "bootstrap_median_ci");
  if (s.empty()) return {kNaN, kNaN};
  if (s.size() == 1) return {s[0], s[0]};
  const std::size_t n = s.size();
  const double nd = static_cast<double>(n);
  std::mt19937_64 rng(seed);
  // A resample draws n indices I = floor(n·U) into the sorted data, so its k-th smallest value is
  // s[floor(n·U_(k))], and the k-th order statistic of n uniforms is Beta(k, n-k+1). Drawing that
  // one Beta variate gives the resample's median exactly, in O(1) instead of O(n) per resample.
  // For even n the next order statistic is U_(k) + (1-U_(k))·(1 - W^(1/(n-k))), W uniform: the
  // smallest of the n-k uniforms above U_(k).
  auto at = [&](double u) { return s[std::min(n - 1, static_cast<std::size_t>(nd * u))]; };
  const std::size_t k = (n + 1) / 2;  // lower median's rank (1-based)
  std::vector<double> medians(static_cast<std::size_t>(resamples));
  for (double& med : medians) {
    const double u = beta(rng, static_cast<double>(k), nd - static_cast<double>(k) + 1.0);
    if (n % 2 == 1) {
      med = at(u);
    } else {
      const double v = u + (1.0 - u) * (1.0 - std::pow(uniform_open01(rng), 1.0 / (nd - static_cast<double>(k))));
      const double lo = at(u), hi = at(v);
      med = lo + (hi - lo) / 2.0;
    }
  }
  std::sort(medians.begin(), medians.end());
  const double alpha = (1.0 - confidence) / 2.0;
  return {percentile_sorted(medians, 100.0 * alpha), percentile_sorted(medians, 100.0 * (1.0 - alpha))};
}

MannWhitney mann_whitney_u(std::span<const double> x, std::span<const double> y) {
  require_no_nan(x, "mann_whitney_u x");
  require_no_nan(y, "mann_whitney_u y");
  if (x.empty() || y.empty()) return {kNaN, 1.0, "empty"};
  const std::size_t n1 = x.size(), n2 = y.size();
  std::vector<double> xy(x.begin(), x.end());
  xy.insert(xy.end(), y.begin(), y.end());
  const Ranked r = rank_average(xy);
  // U1 = Σ (rank_i - (n1+1)/2) over x: keeps the sum at the magnitude of U1 (as scipy gh-24777).
  const double offset = (static_cast<double>(n1) + 1.0) / 2.0;
  double u1 = 0.0;
  for (std::size_t i = 0; i < n1; ++i) u1 += r.ranks[i] - offset;
  const double nn = static_cast<double>(n1) * static_cast<double>(n2);
  const double u2 = nn - u1;

  if (std::all_of(xy.begin(), xy.end(), [&](double v) { return v == xy[0]; })) {
    return {u1, 1.0, "identical"};
  }
  if ((n1 <= 8 || n2 <= 8) && !r.has_ties) {
    const auto pmf = mwu_null_pmf(n1, n2);
    const auto u = static_cast<std::size_t>(std::llround(std::max(u1, u2)));
    long double sf = 0.0L;
    for (std::size_t k = u; k < pmf.size(); ++k) sf += pmf[k];
    return {u1, std::min(1.0, static_cast<double>(2.0L * sf)), "exact"};
  }
  const double n = static_cast<double>(n1 + n2);
  const double sigma = std::sqrt(nn / 12.0 * ((n + 1.0) - r.tie_term / (n * (n - 1.0))));
  // Continuity correction moves |U1 - μ| half a step towards μ, never past it.
  const double dist = std::max(0.0, std::fabs(u1 - nn / 2.0) - 0.5);
  const double z = dist / sigma;
  const double p = std::erfc(z / std::sqrt(2.0));  // 2·sf(z) for the standard normal
  return {u1, std::min(1.0, p), "asymptotic"};
}

}  // namespace atlas::records::stats
