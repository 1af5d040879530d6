#include <doctest/doctest.h>

#include <set>

#include "gates/error.hpp"
#include "gates/shard.hpp"

using namespace atlas::gates;

TEST_CASE("parse_shard accepts i/N with 0 <= i < N") {
  const auto s = parse_shard("2/5");
  CHECK(s.index == 2);
  CHECK(s.count == 5);
  CHECK_THROWS_AS(parse_shard("5/5"), GateError);
  CHECK_THROWS_AS(parse_shard("-1/5"), GateError);
  CHECK_THROWS_AS(parse_shard("1/0"), GateError);
  CHECK_THROWS_AS(parse_shard("1"), GateError);
  CHECK_THROWS_AS(parse_shard("a/b"), GateError);
  CHECK_THROWS_AS(parse_shard("1/2x"), GateError);
}

TEST_CASE("shard slices are deterministic, disjoint, cover the list and balanced") {
  const std::vector<std::string> suites = {"ttft", "decode-anatomy", "agentic", "bfcl", "ttft-long", "prefix"};
  const int N = 4;
  std::multiset<std::string> seen;
  for (int i = 0; i < N; ++i) {
    const auto a = shard_slice(suites, {i, N});
    const auto b = shard_slice(suites, {i, N});
    REQUIRE(a.size() == b.size());
    CHECK(a == b);
    CHECK((a.size() == 1 || a.size() == 2));
    for (const auto& s : a) seen.insert(s);
  }
  CHECK(seen.size() == suites.size());
  for (const auto& s : suites) CHECK(seen.count(s) == 1);
  const auto first = shard_slice(suites, {0, N});
  CHECK(first == std::vector<std::string>{"ttft", "ttft-long"});
  CHECK(shard_slice(suites, {0, 1}).size() == suites.size());
}
