// One way to print a measured value everywhere (issue: 1.289e+04, 17959.8 and 15770.4648 were
// the same kind of figure in three commands).
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
