#include <doctest/doctest.h>

#include <string>

#include "common/json_depth.hpp"

using atlas::json_nesting_depth;

TEST_CASE("json_nesting_depth: arrays and objects count, brackets inside strings do not") {
  CHECK(json_nesting_depth("") == 0);
  CHECK(json_nesting_depth("42") == 0);
  CHECK(json_nesting_depth("[]") == 1);
  CHECK(json_nesting_depth(R"({"a": [1, {"b": [[]]}], "c": {}})") == 5);
  CHECK(json_nesting_depth(R"(["[[[[", "\"[[[", "\\", [1]])") == 2);  // escaped quote and backslash
  CHECK(json_nesting_depth("]]]][") == 1);                             // unbalanced closers never go negative
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(json_nesting_depth(deep) == 100000);
  CHECK(json_nesting_depth(deep, 256) == 257);  // stops early once over the limit
  CHECK(json_nesting_depth(std::string(256, '{'), 256) == 256);
}
