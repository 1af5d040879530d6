#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "fake_target.hpp"
#include "suites/prompt_builder.hpp"

using namespace atlas::suites;

TEST_CASE("splitmix64 reference values") {
  // First outputs for seed 1234567 (Vigna's reference implementation).
  SplitMix64 g(1234567);
  CHECK(g.next() == 6457827717110365317ULL);
  CHECK(g.next() == 3203168211198807973ULL);
}

TEST_CASE("prompts are deterministic in the seed, start with BOS and avoid special ids") {
  atlas::test::CharTokenizer tok;
  PromptBuilder b(tok);
  const auto p1 = b.prompt(128, 42), p2 = b.prompt(128, 42), p3 = b.prompt(128, 43);
  CHECK(p1 == p2);
  CHECK(p1 != p3);
  REQUIRE(p1.size() == 128);
  CHECK(p1.front() == 1);
  for (std::size_t i = 1; i < p1.size(); ++i) {
    CHECK(p1[i] >= 3);  // never <unk>, BOS or EOS
  }
  std::set<int> distinct(p1.begin(), p1.end());
  CHECK(distinct.size() > 30);  // drawn across the vocabulary, not one repeated id
  CHECK(b.filler(16, 7) == b.filler(16, 7));
  CHECK(b.filler(16, 7).size() == 16);
  CHECK(b.prompt(1, 9) == std::vector<int>{1});
  CHECK_THROWS(b.prompt(0, 1));
}

TEST_CASE("ordinary ids exclude control bytes") {
  atlas::test::CharTokenizer tok;
  const auto ids = ordinary_token_ids(tok);
  CHECK(ids.size() == 95);  // printable ASCII; <unk> decodes to a control byte
  CHECK(std::find(ids.begin(), ids.end(), 0) == ids.end());
}

TEST_CASE("mix_seed separates streams") {
  CHECK(mix_seed(1, 16) != mix_seed(1, 64));
  CHECK(mix_seed(1, 16) == mix_seed(1, 16));
  CHECK(mix_seed(2, 16) != mix_seed(1, 16));
}
