// Log-probabilities (engine/logprobs.hpp) against a log-softmax computed here in long double,
// through Session on the CPU backend (raw distribution, whatever the sampling), a backend
// without them, min_new_tokens, and a prefill cancelled at a chunk boundary.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "engine/backend.hpp"
#include "engine/error.hpp"
#include "engine/formats/llama2c.hpp"
#include "engine/logprobs.hpp"
#include "engine/session.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {
/// log_softmax(logits) in long double, by the definition: l_i - log(sum_j exp(l_j)), with the
/// max taken out only so exp does not overflow. No code shared with raw_logprobs.
std::vector<long double> reference_log_softmax(std::span<const float> logits) {
  long double m = logits[0];
  for (float l : logits) m = std::max<long double>(m, l);
  long double sum = 0;
  for (float l : logits) sum += std::exp(static_cast<long double>(l) - m);
  const long double lse = m + std::log(sum);
  std::vector<long double> out;
  for (float l : logits) out.push_back(static_cast<long double>(l) - lse);
  return out;
}

/// Ids by descending reference log-probability, the lower id first on a tie.
std::vector<int> reference_order(const std::vector<long double>& lp) {
  std::vector<int> ids(lp.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) { return lp[static_cast<std::size_t>(a)] > lp[static_cast<std::size_t>(b)]; });
  return ids;
}

void check_against_reference(std::span<const float> logits, const TokenLogprobs& got, int chosen, int top_n) {
  const auto ref = reference_log_softmax(logits);
  const auto order = reference_order(ref);
  CHECK(got.chosen.id == chosen);
  // float holds the result: within a few float ulps of the exact value.
  CHECK(static_cast<long double>(got.chosen.logprob) == doctest::Approx(static_cast<double>(ref[static_cast<std::size_t>(chosen)])).epsilon(1e-6).scale(1.0));
  REQUIRE(got.top.size() == static_cast<std::size_t>(std::min<long long>(top_n, static_cast<long long>(logits.size()))));
  for (std::size_t i = 0; i < got.top.size(); ++i) {
    INFO("rank " << i);
    CHECK(got.top[i].id == order[i]);
    CHECK(static_cast<double>(got.top[i].logprob) == doctest::Approx(static_cast<double>(ref[static_cast<std::size_t>(order[i])])).epsilon(1e-6).scale(1.0));
  }
}

const Model& stories() {
  static const Model m = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  return m;
}

/// A backend with fixed logits and no logprobs (the default forward_sample_logprobs).
class PlainBackend final : public Backend {
 public:
  std::string_view name() const override { return "plain"; }
  int max_seq_len() const override { return 64; }
  std::span<const float> forward(std::span<const int>, int) override { return logits_; }

 private:
  std::vector<float> logits_ = std::vector<float>(8, 0.0f);
};
}  // namespace

TEST_CASE("raw_logprobs: equal a long-double log-softmax, top-n in order, on small and large vocabularies") {
  std::mt19937 rng(7);
  for (const std::size_t vocab : {std::size_t{2}, std::size_t{512}, std::size_t{151936}}) {
    for (const float offset : {0.0f, 80.0f, -200.0f}) {  // exp(l) alone would overflow / underflow
      std::normal_distribution<float> d(offset, 4.0f);
      std::vector<float> logits(vocab);
      for (auto& l : logits) l = d(rng);
      for (const int top_n : {0, 1, 5, kMaxTopLogprobs}) {
        const int chosen = static_cast<int>(rng() % vocab);
        INFO("vocab " << vocab << " offset " << offset << " top_n " << top_n);
        check_against_reference(logits, raw_logprobs(logits, chosen, top_n), chosen, top_n);
      }
    }
  }
}

TEST_CASE("raw_logprobs: ties rank the lower id first; -inf logits; NaN; invalid arguments") {
  const std::vector<float> tie{1.0f, 3.0f, 3.0f, 0.5f, 3.0f};
  const TokenLogprobs t = raw_logprobs(tie, 0, 4);
  REQUIRE(t.top.size() == 4);
  CHECK(t.top[0].id == 1);
  CHECK(t.top[1].id == 2);
  CHECK(t.top[2].id == 4);
  CHECK(t.top[3].id == 0);
  check_against_reference(tie, t, 0, 4);
  // Uniform over 4 tokens: log(1/4) each.
  const std::vector<float> uniform(4, 2.5f);
  CHECK(raw_logprobs(uniform, 3, 0).chosen.logprob == doctest::Approx(-std::log(4.0)).epsilon(1e-7));
  // A masked token is impossible: -inf, and it ranks last.
  const float ninf = -std::numeric_limits<float>::infinity();
  const std::vector<float> masked{0.0f, ninf, 0.0f};
  const TokenLogprobs m = raw_logprobs(masked, 1, 3);
  CHECK(std::isinf(m.chosen.logprob));
  CHECK(m.chosen.logprob < 0);
  CHECK(m.top[0].logprob == doctest::Approx(-std::log(2.0)));
  CHECK(m.top[2].id == 1);
  const std::vector<float> nan{0.0f, std::numeric_limits<float>::quiet_NaN(), 1.0f};
  CHECK(std::isnan(raw_logprobs(nan, 0, 2).chosen.logprob));
  CHECK(raw_logprobs(nan, 0, 2).top[0].id == 2);  // NaN ranks last, the rest stay in order
  CHECK_THROWS_WITH_AS(raw_logprobs(tie, 5, 1), doctest::Contains("chosen token 5 is outside the vocabulary of 5"), EngineError);
  CHECK_THROWS_WITH_AS(raw_logprobs(tie, 0, 21), doctest::Contains("top_n = 21 is outside [0, 20]"), EngineError);
  CHECK_THROWS_AS(raw_logprobs({}, 0, 1), EngineError);
  CHECK(raw_logprobs(tie, 0, 20).top.size() == 5);  // never more than the vocabulary
}

TEST_CASE("generate: logprobs are of the raw distribution at every step, whatever the temperature") {
  auto backend = make_backend(stories(), {});
  auto oracle = make_backend(stories(), {});
  Session session(*backend);
  const std::vector<int> prompt{1, 403, 407};
  for (const float temperature : {0.0f, 1.5f}) {
    GenerateRequest req;
    req.prompt_ids = prompt;
    req.max_new_tokens = 8;
    req.sampling.temperature = temperature;
    req.sampling.seed = 42;
    req.logprobs = true;
    req.top_logprobs = 5;
    std::vector<TokenEvent> events;
    session.reset();  // a cold prefill, so the oracle below repeats the very same computation
    const GenerateResult r = session.generate(req, [&](const TokenEvent& e) { events.push_back(e); });
    REQUIRE(r.output_ids.size() == 8);
    REQUIRE(r.logprobs.size() == 8);
    REQUIRE(events.size() == 8);
    // The logits of each step from a separate backend running the same steps (the prompt, then
    // one token at a time: the same float operations, so the same logits bit for bit).
    std::span<const float> logits = oracle->forward(prompt, 0);
    for (std::size_t i = 0; i < r.output_ids.size(); ++i) {
      INFO("temperature " << temperature << " step " << i);
      if (i > 0) logits = oracle->forward(std::span<const int>(&r.output_ids[i - 1], 1), static_cast<int>(prompt.size() + i - 1));
      const std::vector<float> copy(logits.begin(), logits.end());
      check_against_reference(copy, r.logprobs[i], r.output_ids[i], 5);
      REQUIRE(events[i].logprobs.has_value());
      CHECK(events[i].logprobs->chosen.logprob == r.logprobs[i].chosen.logprob);
      if (temperature == 0.0f) CHECK(r.logprobs[i].top[0].id == r.output_ids[i]);  // greedy picks the most likely
    }
  }
  // Without the flag nothing is computed or kept.
  GenerateRequest plain;
  plain.prompt_ids = prompt;
  plain.max_new_tokens = 3;
  const GenerateResult p = session.generate(plain, [&](const TokenEvent& e) { CHECK(!e.logprobs); });
  CHECK(p.logprobs.empty());
}

TEST_CASE("generate: a backend without logprobs refuses them before any work, naming itself") {
  PlainBackend b;
  CHECK(!b.supports_logprobs());
  Session session(b);
  GenerateRequest req;
  req.prompt_ids = {1};
  req.max_new_tokens = 2;
  CHECK(session.generate(req).output_ids.size() == 2);
  req.logprobs = true;
  try {
    session.generate(req);
    FAIL("no error");
  } catch (const UnsupportedFeatureError& e) {
    CHECK(e.backend() == "plain");
    CHECK(e.feature() == "logprobs");
    CHECK(std::string(e.what()) == "the plain backend does not compute logprobs");
  }
  CHECK(make_backend(stories(), {})->supports_logprobs());
  req.top_logprobs = 21;
  CHECK_THROWS_WITH_AS(session.generate(req), doctest::Contains("top_logprobs = 21"), EngineError);
}

TEST_CASE("generate: stop ids are not honoured before min_new_tokens") {
  auto backend = make_backend(stories(), {});
  Session session(*backend);
  GenerateRequest req;
  req.prompt_ids = {1};
  req.max_new_tokens = 12;
  const auto free_run = session.generate(req).output_ids;
  REQUIRE(free_run.size() == 12);
  req.stop_ids = {free_run[2]};
  CHECK(session.generate(req).output_ids.size() == static_cast<std::size_t>(std::find(free_run.begin(), free_run.end(), free_run[2]) - free_run.begin()));
  req.min_new_tokens = 6;
  const GenerateResult r = session.generate(req);
  // Greedy: the same tokens as the free run, through the stop id at index 2, up to the first
  // occurrence of the stop id at index >= 6 (or max_new_tokens).
  const auto later = std::find(free_run.begin() + 6, free_run.end(), free_run[2]);
  CHECK(r.output_ids == std::vector<int>(free_run.begin(), later));
  CHECK(r.stop == (later == free_run.end() ? StopReason::max_tokens : StopReason::stop_token));
  req.min_new_tokens = 13;
  CHECK_THROWS_WITH_AS(session.generate(req), doctest::Contains("min_new_tokens = 13 is invalid"), EngineError);
}

TEST_CASE("generate: a prefill cancelled at a chunk boundary stops there; the session stays usable") {
  auto backend = make_backend(stories(), {});
  Session session(*backend);
  std::vector<int> prompt{1};
  for (int i = 0; prompt.size() < 400; ++i) prompt.push_back(259 + (i * 31) % 250);  // two CPU chunks
  GenerateRequest req;
  req.prompt_ids = prompt;
  req.max_new_tokens = 4;
  const auto cold = session.generate(req).output_ids;
  session.reset();
  int asked = 0;
  req.cancelled = [&] { return ++asked >= 2; };  // no before the prefill, yes at the first boundary
  int tokens = 0;
  // Thrown at the boundary after the first 256 tokens: the second chunk never runs (a check after
  // the whole prefill would say "after the prefill").
  CHECK_THROWS_WITH_AS(session.generate(req, [&](const TokenEvent&) { ++tokens; }), doctest::Contains("chunk boundary"), GenerationCancelled);
  CHECK(asked == 2);
  CHECK(tokens == 0);
  CHECK(session.cached_tokens().empty());
  // The next request runs from scratch and gives the cold run's tokens.
  req.cancelled = {};
  CHECK(session.generate(req).output_ids == cold);
  // Cancelled before the prefill: the cached prompt stays.
  req.cancelled = [] { return true; };
  CHECK_THROWS_WITH_AS(session.generate(req), doctest::Contains("before the prefill"), GenerationCancelled);
  CHECK(session.cached_tokens().size() == prompt.size() + cold.size() - 1);
}
