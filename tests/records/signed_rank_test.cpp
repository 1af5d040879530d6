// Wilcoxon signed-rank and Hodges–Lehmann interval against scipy 1.10.1
// (scipy.stats.wilcoxon(d, method='exact')) and a brute-force enumeration of the Walsh-average
// interval (Hollander & Wolfe §3.3), computed once and pasted here.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "records/error.hpp"
#include "records/signed_rank.hpp"

using namespace atlas::records;
using namespace atlas::records::stats;

TEST_CASE("wilcoxon_signed_rank matches scipy's exact p-values") {
  const std::vector<double> d = {0.031, 0.052, -0.012, 0.044, 0.061, 0.023, 0.038, 0.049, 0.027, -0.005};
  auto r = wilcoxon_signed_rank(d);
  CHECK(r.n == 10);
  CHECK(r.t_plus == 52);  // ranks of the negatives are 2 and 1: 55 - 3
  CHECK(r.p_value == doctest::Approx(0.009765625));
  CHECK(r.method == "exact");
  CHECK(wilcoxon_signed_rank(std::vector<double>{1.5, -0.3, 2.2, 0.7, -1.1, 0.9, 1.8, 0.4}).p_value ==
        doctest::Approx(0.109375));
  CHECK(wilcoxon_signed_rank(std::vector<double>{-0.2, 0.1, 0.3, -0.4, 0.05, -0.15, 0.25, -0.35, 0.12, -0.08, 0.02, 0.33})
            .p_value == doctest::Approx(1.0));
  // All of n = 8 on one side: the smallest two-sided p, 2 / 2^8.
  CHECK(wilcoxon_signed_rank(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}).p_value == doctest::Approx(2.0 / 256));
}

TEST_CASE("wilcoxon_signed_rank: zeros dropped, ties exact by permutation, bad input") {
  auto r = wilcoxon_signed_rank(std::vector<double>{0, 0, 1, 2, 3});
  CHECK(r.n == 3);
  CHECK(r.p_value == doctest::Approx(0.25));  // 2 / 2^3
  CHECK(wilcoxon_signed_rank(std::vector<double>{0, 0}).method == "empty");
  // |d| all tied: T+ counts the positives (midrank 2.5 each); P(T+ >= 4·2.5) = 1/16, two-sided 1/8.
  CHECK(wilcoxon_signed_rank(std::vector<double>{1, 1, 1, 1}).p_value == doctest::Approx(0.125));
  CHECK_THROWS_AS(wilcoxon_signed_rank(std::vector<double>{1, NAN}), RecordError);
  CHECK_THROWS_AS(wilcoxon_signed_rank(std::vector<double>{INFINITY}), RecordError);
}

TEST_CASE("hodges_lehmann: estimate and the exact Walsh-average interval") {
  const std::vector<double> d = {0.031, 0.052, -0.012, 0.044, 0.061, 0.023, 0.038, 0.049, 0.027, -0.005};
  auto e = hodges_lehmann(d, 0.99);
  CHECK(e.estimate == doctest::Approx(0.0335));
  REQUIRE(e.ci_finite);
  CHECK(e.ci.lo == doctest::Approx(0.0055));
  CHECK(e.ci.hi == doctest::Approx(0.0525));
  CHECK(e.achieved_confidence == doctest::Approx(0.990234375));
  e = hodges_lehmann(std::vector<double>{1.5, -0.3, 2.2, 0.7, -1.1, 0.9, 1.8, 0.4}, 0.95);
  CHECK(e.estimate == doctest::Approx(0.775));
  CHECK(e.ci.lo == doctest::Approx(-0.3));
  CHECK(e.ci.hi == doctest::Approx(1.8));
  CHECK(e.achieved_confidence == doctest::Approx(0.9609375));
  e = hodges_lehmann(std::vector<double>{-0.2, 0.1, 0.3, -0.4, 0.05, -0.15, 0.25, -0.35, 0.12, -0.08, 0.02, 0.33}, 0.9);
  CHECK(e.estimate == doctest::Approx(0.0).epsilon(1e-12));
  CHECK(e.ci.lo == doctest::Approx(-0.14));
  CHECK(e.ci.hi == doctest::Approx(0.135));
}

TEST_CASE("hodges_lehmann: too few values for the confidence give an infinite interval") {
  // 2^-7 = 0.0078 > 0.005: seven values cannot give a 99% interval, eight can ([min, max]).
  auto e = hodges_lehmann(std::vector<double>{1, 2, 3, 4, 5, 6, 7}, 0.99);
  CHECK_FALSE(e.ci_finite);
  CHECK(std::isinf(e.ci.lo));
  CHECK(e.min_n == 8);
  e = hodges_lehmann(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}, 0.99);
  REQUIRE(e.ci_finite);
  CHECK(e.ci.lo == 1);
  CHECK(e.ci.hi == 8);
  CHECK_THROWS_AS(hodges_lehmann(std::vector<double>{1}, 1.0), RecordError);
}

TEST_CASE("normal_quantile") {
  CHECK(normal_quantile(0.995) == doctest::Approx(2.5758293035489004).epsilon(1e-9));
  CHECK(normal_quantile(0.95) == doctest::Approx(1.6448536269514722).epsilon(1e-9));
  CHECK(normal_quantile(0.5) == doctest::Approx(0.0).epsilon(1e-9));
  CHECK_THROWS_AS(normal_quantile(0), RecordError);
}
