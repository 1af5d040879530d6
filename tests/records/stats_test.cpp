#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "records/error.hpp"
#include "records/stats.hpp"
#include "records/summary.hpp"

namespace st = atlas::records::stats;
using atlas::records::RecordError;

TEST_CASE("percentile matches numpy 'linear' (Hyndman & Fan type 7)") {
  // numpy/lib/tests/test_function_base.py TestPercentile.test_basic:
  // x = np.arange(8) * 0.5; percentile(x, 0) = 0, percentile(x, 100) = 3.5, percentile(x, 50) = 1.75
  const std::vector<double> x{0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5};
  CHECK(st::percentile(x, 0) == 0.0);
  CHECK(st::percentile(x, 100) == 3.5);
  CHECK(st::percentile(x, 50) == 1.75);
  // numpy.percentile docs example: a = [[10, 7, 4], [3, 2, 1]]; np.percentile(a, 50) = 3.5,
  // np.percentile(a, 50, axis=0) = [6.5, 4.5, 2.5]
  CHECK(st::percentile(std::vector<double>{10, 7, 4, 3, 2, 1}, 50) == 3.5);
  CHECK(st::median(std::vector<double>{10, 3}) == 6.5);
  CHECK(st::median(std::vector<double>{7, 2}) == 4.5);
  // numpy test_function_base TestPercentile: x = np.arange(12).reshape(3, 4);
  // percentile(x, (25, 50, 100), axis=1) rows = [0.75, 1.5, 3], [4.75, 5.5, 7], [8.75, 9.5, 11]
  CHECK(st::percentile(std::vector<double>{0, 1, 2, 3}, 25) == doctest::Approx(0.75));
  CHECK(st::percentile(std::vector<double>{4, 5, 6, 7}, 25) == doctest::Approx(4.75));
  CHECK(st::percentile(std::vector<double>{11, 8, 10, 9}, 50) == doctest::Approx(9.5));
  // Order of input does not matter; p99 of 1..100 = 1 + 0.99·99 = 99.01 (type 7 by hand).
  std::vector<double> h;
  for (int i = 100; i >= 1; --i) h.push_back(i);
  CHECK(st::percentile(h, 99) == doctest::Approx(99.01));
  CHECK(st::percentile(h, 90) == doctest::Approx(90.1));
}

TEST_CASE("percentile edge cases") {
  CHECK(std::isnan(st::percentile(std::vector<double>{}, 50)));
  CHECK(std::isnan(st::median(std::vector<double>{})));
  CHECK(st::median_or(std::vector<double>{}, 0.0) == 0.0);
  CHECK(st::median_or(std::vector<double>{4, 1, 3, 2}, 0.0) == 2.5);  // even n: the middle two's mean
  CHECK(st::percentile(std::vector<double>{4.25}, 99) == 4.25);
  CHECK_THROWS_AS(st::percentile(std::vector<double>{1, 2}, 101), RecordError);
  CHECK_THROWS_AS(st::percentile(std::vector<double>{1, 2}, -1), RecordError);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH_AS(st::median(std::vector<double>{1, nan}), doctest::Contains("sample 1 is NaN"), RecordError);
}

TEST_CASE("mean and sample standard deviation") {
  // numpy.std docs: a = [[1, 2], [3, 4]]; np.std(a) = 1.1180339887498949 (population, ddof=0);
  // with ddof=1 (sample) the value is sqrt(5/3) = 1.2909944487358056.
  const std::vector<double> a{1, 2, 3, 4};
  CHECK(st::mean(a) == 2.5);
  CHECK(st::stdev(a) == doctest::Approx(1.2909944487358056));
  CHECK(st::stdev(std::vector<double>{5}) == 0.0);
  CHECK(st::stdev(std::vector<double>{}) == 0.0);
  CHECK(std::isnan(st::mean(std::vector<double>{})));
}

TEST_CASE("Mann-Whitney U, exact branch, values from scipy docs and test suite") {
  // scipy.stats.mannwhitneyu docstring example (Shier 2004): males vs females,
  // method="exact" -> U1 = 17.0, p = 0.1111111111111111. auto picks exact (n <= 8, no ties).
  auto r = st::mann_whitney_u(std::vector<double>{19, 22, 16, 29, 24}, std::vector<double>{20, 11, 17, 12});
  CHECK(r.method == "exact");
  CHECK(r.u1 == 17.0);
  CHECK(r.p_value == doctest::Approx(0.1111111111111111).epsilon(1e-12));

  // scipy/stats/tests/test_mannwhitneyu.py TestMannWhitneyU.cases_basic (checked there against R
  // wilcox.test exact=TRUE): two-sided exact -> (16., 0.7035714285714).
  const std::vector<double> x{210.052110, 110.190630, 307.918612};
  const std::vector<double> y{436.08811482466416, 416.37397329768191, 179.96975939463582, 197.8118754228619,
                              34.038757281225756, 138.54220550921517, 128.7769351470246,  265.92721427951852,
                              275.6617533155341,  592.34083395416258, 448.73177590617018, 300.61495185038905,
                              187.97508449019588};
  r = st::mann_whitney_u(x, y);
  CHECK(r.method == "exact");
  CHECK(r.u1 == 16.0);
  CHECK(r.p_value == doctest::Approx(0.7035714285714).epsilon(1e-10));

  // test_mannwhitneyu.py test_gh_9184 (R: wilcox.test(x, y, exact=TRUE)): U = 35, two-sided exact
  // p = 0.2544122544123. n1 = 10 > 8 but n2 = 5 <= 8, so 'auto' is exact.
  r = st::mann_whitney_u(std::vector<double>{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46},
                         std::vector<double>{1.15, 0.88, 0.90, 0.74, 1.21});
  CHECK(r.method == "exact");
  CHECK(r.u1 == 35.0);
  CHECK(r.p_value == doctest::Approx(0.2544122544123).epsilon(1e-10));

  // test_exact_U_equals_mean: x = [1, 2, 3], y = [1.5, 2.5] -> U = 3, p = 1 (clipped).
  r = st::mann_whitney_u(std::vector<double>{1, 2, 3}, std::vector<double>{1.5, 2.5});
  CHECK(r.u1 == 3.0);
  CHECK(r.p_value == 1.0);
}

TEST_CASE("Mann-Whitney U exact p equals brute-force enumeration of all rank splits") {
  // Under H0 every choice of which n1 of the n1+n2 ranks belong to x is equally likely.
  auto brute = [](int n1, int n2, double u_obs) {
    const int n = n1 + n2;
    const double mu = n1 * n2 / 2.0;
    long long extreme = 0, total = 0;
    for (int mask = 0; mask < (1 << n); ++mask) {
      if (__builtin_popcount(static_cast<unsigned>(mask)) != n1) continue;
      double r1 = 0;
      for (int i = 0; i < n; ++i)
        if (mask & (1 << i)) r1 += i + 1;
      const double u = r1 - n1 * (n1 + 1) / 2.0;
      ++total;
      if (std::fabs(u - mu) >= std::fabs(u_obs - mu) - 1e-9) ++extreme;
    }
    return std::min(1.0, static_cast<double>(extreme) / static_cast<double>(total));
  };
  // x_i = 2i + 0.5 and y_j = 3j interleave differently for every (n1, n2): all U values vary.
  for (int n1 = 1; n1 <= 6; ++n1) {
    for (int n2 = 1; n2 <= 8; ++n2) {
      std::vector<double> x, y;
      for (int i = 0; i < n1; ++i) x.push_back(2 * i + 0.5);
      for (int j = 0; j < n2; ++j) y.push_back(3 * j);
      const auto r = st::mann_whitney_u(x, y);
      REQUIRE(r.method == "exact");
      CHECK(r.p_value == doctest::Approx(brute(n1, n2, r.u1)).epsilon(1e-12));
    }
  }
}

TEST_CASE("Mann-Whitney U, asymptotic branch, values from scipy's test suite") {
  // test_mannwhitneyu.py test_mannwhitneyu_two_sided ("old tests moved from test_stats"):
  // n = 30 vs 20, no ties -> asymptotic; U1 = 498, p = 9.188326533255e-05 (rtol 1e-14 there).
  const std::vector<double> X{19.8958398126694, 19.5452691647182, 19.0577309166425, 21.716543054589,  20.3269502208702,
                              20.0009273294025, 19.3440043632957, 20.4216806548105, 19.0649894736528, 18.7808043120398,
                              19.3680942943298, 19.4848044069953, 20.7514611265663, 19.0894948874598, 19.4975522356628,
                              18.9971170734274, 20.3239606288208, 20.6921298083835, 19.0724259532507, 18.9825187935021,
                              19.5144462609601, 19.8256857844223, 20.5174677102032, 21.1122407995892, 17.9490854922535,
                              18.2847521114727, 20.1072217648826, 18.6439891962179, 20.4970638083542, 19.5567594734914};
  const std::vector<double> Y{19.2790668029091, 16.993808441865,  18.5416338448258, 17.2634018833575, 19.1577183624616,
                              18.5119655377495, 18.6068455037221, 18.8358343362655, 19.0366413269742, 18.1135025515417,
                              19.2201873866958, 17.8344909022841, 18.2894380745856, 18.6661374133922, 19.9688601693252,
                              16.0672254617636, 19.00596360572,   19.201561539032,  19.0487501090183, 19.0847908674356};
  auto r = st::mann_whitney_u(X, Y);
  CHECK(r.method == "asymptotic");
  CHECK(r.u1 == 498.0);
  CHECK(r.p_value == doctest::Approx(9.188326533255e-05).epsilon(1e-9));
  r = st::mann_whitney_u(Y, X);
  CHECK(r.u1 == 102.0);
  CHECK(r.p_value == doctest::Approx(9.188326533255e-05).epsilon(1e-9));

  // test_tie_correct (checked there against R wilcox.test(x, y, exact=FALSE)):
  // x = [1,2,3,4], y = [1,2,3,4,5] -> ties, so 'auto' is asymptotic: U = 8, p = 0.7086240584439.
  r = st::mann_whitney_u(std::vector<double>{1, 2, 3, 4}, std::vector<double>{1, 2, 3, 4, 5});
  CHECK(r.method == "asymptotic");
  CHECK(r.u1 == 8.0);
  CHECK(r.p_value == doctest::Approx(0.7086240584439).epsilon(1e-10));

  // test_gh_11355b (method='asymptotic'; ties make 'auto' asymptotic too): inf is the largest value.
  const double inf = std::numeric_limits<double>::infinity();
  r = st::mann_whitney_u(std::vector<double>{1, 2, 3, 4}, std::vector<double>{3, 6, 7, 8, inf, 3, 2, 1, 4, 4, 5});
  CHECK(r.u1 == 10.0);
  CHECK(r.p_value == doctest::Approx(0.1297704873477).epsilon(1e-10));
  r = st::mann_whitney_u(std::vector<double>{1, inf, inf, 4}, std::vector<double>{3, 6, 7, 8, inf, inf, 2, 1, 4, 4, 5});
  CHECK(r.u1 == 24.5);
  CHECK(r.p_value == doctest::Approx(0.7912517950119).epsilon(1e-10));

  // test_gh_2118 two-sided: U == m·n/2 with the continuity correction -> p = 1, not > 1.
  r = st::mann_whitney_u(std::vector<double>{1, 2}, std::vector<double>{1, 2});
  CHECK(r.u1 == 2.0);
  CHECK(r.p_value == 1.0);
}

TEST_CASE("Mann-Whitney U corner cases") {
  auto r = st::mann_whitney_u(std::vector<double>{3, 3, 3}, std::vector<double>{3, 3});
  CHECK(r.method == "identical");
  CHECK(r.p_value == 1.0);
  CHECK(r.u1 == 3.0);
  r = st::mann_whitney_u(std::vector<double>{}, std::vector<double>{1, 2});
  CHECK(r.method == "empty");
  CHECK(r.p_value == 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(st::mann_whitney_u(std::vector<double>{1, 2}, std::vector<double>{nan}), RecordError);
  // Exact branch with a large second sample stays finite and in [0, 1].
  std::vector<double> a{0.5, 1.5, 2.5}, b;
  for (int i = 0; i < 5000; ++i) b.push_back(3.0 + i);
  r = st::mann_whitney_u(a, b);
  CHECK(r.method == "exact");
  CHECK(r.u1 == 0.0);
  // P(U <= 0) = 1/C(5003, 3) each side -> p = 2 / C(5003, 3).
  CHECK(r.p_value == doctest::Approx(2.0 / (5003.0 * 5002.0 * 5001.0 / 6.0)).epsilon(1e-9));
}

TEST_CASE("bootstrap CI of the median is reproducible and brackets the median") {
  std::vector<double> x;
  for (int i = 0; i < 101; ++i) x.push_back(10.0 + 0.1 * ((i * 37) % 101));
  const auto a = st::bootstrap_median_ci(x);
  const auto b = st::bootstrap_median_ci(x);
  CHECK(a.lo == b.lo);
  CHECK(a.hi == b.hi);
  const double med = st::median(x);
  CHECK(a.lo <= med);
  CHECK(a.hi >= med);
  CHECK(a.lo < a.hi);
  // The sampling distribution of the median of a uniform grid of width 10 over 101 points has a
  // standard error of about 0.5; the 95 % interval must be of that order, well inside the data.
  CHECK(a.hi - a.lo > 0.5);
  CHECK(a.hi - a.lo < 4.0);
  const auto w = st::bootstrap_median_ci(x, 0.99);
  CHECK(w.lo <= a.lo);
  CHECK(w.hi >= a.hi);
  const auto one = st::bootstrap_median_ci(std::vector<double>{4.0});
  CHECK(one.lo == 4.0);
  CHECK(one.hi == 4.0);
  CHECK(std::isnan(st::bootstrap_median_ci(std::vector<double>{}).lo));
  CHECK_THROWS_AS(st::bootstrap_median_ci(x, 1.0), RecordError);
  CHECK_THROWS_AS(st::bootstrap_median_ci(x, 0.95, 0), RecordError);
}

// Plain bootstrap: resample n values with replacement, take the median; percentile of medians.
static st::Interval naive_bootstrap(const std::vector<double>& x, int resamples) {
  std::mt19937_64 rng(7);
  std::vector<double> meds, buf(x.size());
  for (int r = 0; r < resamples; ++r) {
    for (auto& b : buf) b = x[rng() % x.size()];
    meds.push_back(st::median(buf));
  }
  return {st::percentile(meds, 2.5), st::percentile(meds, 97.5)};
}

TEST_CASE("bootstrap via order-statistic sampling agrees with plain resampling") {
  // Data 0..n-1: the CI endpoints are ranks, so agreement within ~1.5 ranks is Monte Carlo error
  // (the 2.5 % quantile of 20000 resampled medians has a standard error well below one rank).
  for (int n : {101, 100, 7, 8}) {
    std::vector<double> x;
    for (int i = 0; i < n; ++i) x.push_back(i);
    const auto fast = st::bootstrap_median_ci(x, 0.95, 20000);
    const auto slow = naive_bootstrap(x, 20000);
    CHECK_MESSAGE(std::fabs(fast.lo - slow.lo) <= 1.5, "n=" << n << " lo " << fast.lo << " vs " << slow.lo);
    CHECK_MESSAGE(std::fabs(fast.hi - slow.hi) <= 1.5, "n=" << n << " hi " << fast.hi << " vs " << slow.hi);
  }
}

TEST_CASE("summarize") {
  std::vector<double> x;
  for (int i = 1; i <= 100; ++i) x.push_back(i);
  const auto s = atlas::records::summarize(x);
  CHECK(s.n == 100);
  CHECK(s.min == 1);
  CHECK(s.max == 100);
  CHECK(s.p50 == 50.5);
  CHECK(s.mean == 50.5);
  CHECK(s.p90 == doctest::Approx(90.1));
  CHECK(s.p99 == doctest::Approx(99.01));
  // Sample stdev of 1..100 = sqrt(100·101/12) = 29.011491975882016.
  CHECK(s.stdev == doctest::Approx(29.011491975882016));
  CHECK(s.ci95_lo <= 50.5);
  CHECK(s.ci95_hi >= 50.5);
  const auto e = atlas::records::summarize(std::vector<double>{});
  CHECK(e.n == 0);
  CHECK(std::isnan(e.p50));
  const auto j = atlas::records::to_json(e);
  CHECK(j["n"] == 0);
  CHECK(j["p50"].is_null());
  CHECK(j["ci95_hi"].is_null());
}
