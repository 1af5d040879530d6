// One way to print a measured value everywhere (1.289e+04, 17959.8 and 15770.4648 were once the
// same kind of figure in three commands), and one way to print a percentage.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "common/number_format.hpp"

using atlas::format_number;

TEST_CASE("format_number: four significant digits, no exponent between 1e-4 and 1e15") {
  CHECK(format_number(12890.0) == "12890");
  CHECK(format_number(17959.8) == "17960");
  CHECK(format_number(15770.4648) == "15770");
  CHECK(format_number(1289.44) == "1289");
  CHECK(format_number(15.7704648) == "15.77");
  CHECK(format_number(1.5) == "1.5");
  CHECK(format_number(42.0) == "42");
  CHECK(format_number(0.0123456) == "0.01235");
  CHECK(format_number(0.5) == "0.5");
  CHECK(format_number(-3.25) == "-3.25");
  CHECK(format_number(999.96) == "1000");
  CHECK(format_number(123456789.0) == "123456789");
  CHECK(format_number(0.0) == "0");
  CHECK(format_number(-0.0) == "0");
  CHECK(format_number(-0.00001) == "-1.000e-05");
  CHECK(format_number(3.14159e-5) == "3.142e-05");
  CHECK(format_number(2e15) == "2.000e+15");
  CHECK(format_number(std::nan("")) == "-");
  CHECK(format_number(std::numeric_limits<double>::infinity()) == "inf");
}

TEST_CASE("format_percent: two decimals, a sign for a change, two significant digits below 0.005, - for NaN") {
  using atlas::format_fraction_percent;
  using atlas::format_percent;
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(format_percent(3.214, false) == "3.21%");
  CHECK(format_percent(3.214, true) == "+3.21%");
  CHECK(format_percent(-0.5, true) == "-0.50%");
  CHECK(format_percent(0.0, true) == "+0.00%");
  CHECK(format_percent(0.0, false) == "0.00%");
  // "+0.00%" beside a verdict would read as no change; a non-zero one keeps two digits.
  CHECK(format_percent(0.00043, true) == "+0.00043%");
  CHECK(format_percent(0.0049, false) == "0.0049%");
  CHECK(format_percent(-0.00043, false) == "-0.00043%");
  CHECK(format_percent(std::nan(""), true) == "-");
  CHECK(format_percent(inf, false) == "+inf");
  CHECK(format_percent(-inf, true) == "-inf");
  CHECK(format_fraction_percent(0.0321, true) == "+3.21%");
  CHECK(format_fraction_percent(0.05, false) == "5.00%");
  // Every digit of the widest double, not a cut-off string.
  const std::string huge = format_percent(1e300, true);
  CHECK(huge.size() == 1 + 301 + 3 + 1);
  CHECK(huge.back() == '%');
}
