#include <doctest/doctest.h>

#include "suites/error.hpp"
#include "suites/latency.hpp"

using atlas::suites::compute_latency;
using atlas::suites::TargetResponse;

TEST_CASE("TTFT, E2E, TPOT and ITL from synthetic timestamps") {
  TargetResponse r;
  r.t_request_ns = 1'000'000'000;
  // first token after 12.5 ms, then gaps of 2, 3, 5 ms
  r.token_t_ns = {1'012'500'000, 1'014'500'000, 1'017'500'000, 1'022'500'000};
  const auto l = compute_latency(r);
  CHECK(l.output_tokens == 4);
  CHECK(l.ttft_ms == doctest::Approx(12.5).epsilon(1e-12));
  CHECK(l.e2e_ms == doctest::Approx(22.5).epsilon(1e-12));
  REQUIRE(l.tpot_ms);
  CHECK(*l.tpot_ms == doctest::Approx(10.0 / 3.0).epsilon(1e-12));  // (22.5 - 12.5) / (4 - 1)
  REQUIRE(l.itl_ms.size() == 3);
  CHECK(l.itl_ms[0] == doctest::Approx(2.0));
  CHECK(l.itl_ms[1] == doctest::Approx(3.0));
  CHECK(l.itl_ms[2] == doctest::Approx(5.0));
  REQUIRE(l.decode_tok_s);
  CHECK(*l.decode_tok_s == doctest::Approx(300.0));  // 3 tokens in 10 ms
}

TEST_CASE("a single token has TTFT but no TPOT, ITL or decode rate") {
  TargetResponse r;
  r.t_request_ns = 100;
  r.token_t_ns = {2'000'100};
  const auto l = compute_latency(r);
  CHECK(l.ttft_ms == doctest::Approx(2.0));
  CHECK(l.e2e_ms == doctest::Approx(2.0));
  CHECK_FALSE(l.tpot_ms);
  CHECK(l.itl_ms.empty());
  CHECK_FALSE(l.decode_tok_s);
}

TEST_CASE("bad timestamps and failed responses are errors, not numbers") {
  TargetResponse r;
  r.t_request_ns = 10;
  CHECK_THROWS_AS(compute_latency(r), atlas::suites::SuiteError);  // no tokens
  r.token_t_ns = {20, 15};
  CHECK_THROWS_WITH(compute_latency(r), doctest::Contains("token_t_ns[1] goes backwards"));
  r.token_t_ns = {5};
  CHECK_THROWS_WITH(compute_latency(r), doctest::Contains("before t_request_ns"));
  r.ok = false;
  r.error = "boom";
  CHECK_THROWS_WITH(compute_latency(r), doctest::Contains("boom"));
}

TEST_CASE("tokens_per_s") {
  CHECK(atlas::suites::tokens_per_s(128, 64) == doctest::Approx(2000.0));
  CHECK(atlas::suites::tokens_per_s(128, 0) == 0.0);
}

TEST_CASE("tokens that came in the first read are left out of TPOT, ITL and tok/s, which stay consistent") {
  // Over HTTP, three tokens arrived in the first read (one time), then two more 4 ms apart.
  TargetResponse r;
  r.t_request_ns = 0;
  r.token_t_ns = {10'000'000, 10'000'000, 10'000'000, 14'000'000, 18'000'000};
  const auto l = compute_latency(r);
  CHECK(l.first_read_tokens == 3);
  CHECK(l.ttft_ms == doctest::Approx(10.0));
  CHECK(l.e2e_ms == doctest::Approx(18.0));
  REQUIRE(l.itl_ms.size() == 2);  // never two 0 ms gaps for tokens that came in one read
  CHECK(l.itl_ms[0] == doctest::Approx(4.0));
  CHECK(l.itl_ms[1] == doctest::Approx(4.0));
  REQUIRE(l.tpot_ms);
  CHECK(*l.tpot_ms == doctest::Approx(4.0));  // (18 - 10) / (5 - 3), = mean ITL
  REQUIRE(l.decode_tok_s);
  CHECK(*l.decode_tok_s == doctest::Approx(250.0));  // = 1 / TPOT, not 4 tokens in 8 ms
}

TEST_CASE("every token in one read: no TPOT, ITL or rate (never 0 ms or an unbounded tok/s)") {
  TargetResponse r;
  r.t_request_ns = 0;
  r.token_t_ns = {5'000'000, 5'000'000, 5'000'000, 5'000'000};
  const auto l = compute_latency(r);
  CHECK(l.first_read_tokens == 4);
  CHECK_FALSE(l.tpot_ms);
  CHECK_FALSE(l.decode_tok_s);
  CHECK(l.itl_ms.empty());
}
