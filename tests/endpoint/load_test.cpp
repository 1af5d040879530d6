#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <numeric>
#include <thread>

#include <doctest/doctest.h>

#include "common/clock.hpp"
#include "suites/endpoint/load.hpp"
#include "tests/server/fake_generator.hpp"

using namespace atlas::suites::endpoint;
using atlas::suites::TargetRequest;
using atlas::suites::TargetResponse;

namespace {
/// A target that takes `latency` per request and records how many were in flight at once.
class SlowTarget final : public atlas::suites::Target {
 public:
  explicit SlowTarget(std::chrono::milliseconds latency) : latency_(latency) {}
  std::string name() const override { return "slow"; }
  /// After this many requests every one fails without a response byte (a server that died).
  int dies_after = 1 << 30;
  std::atomic<int> sent{0};
  TargetResponse generate(const TargetRequest& req) override {
    TargetResponse r;
    r.t_request_ns = atlas::now_ns();
    if (++sent > dies_after) {
      r.ok = false;
      r.error = "connect failed: Connection refused";
      return r;
    }
    const int now = ++in_flight_;
    int prev = max_in_flight_.load();
    while (now > prev && !max_in_flight_.compare_exchange_weak(prev, now)) {
    }
    std::this_thread::sleep_for(latency_);
    --in_flight_;
    r.completion_tokens = req.max_new_tokens;
    r.t_end_ns = atlas::now_ns();
    return r;
  }
  void reset_session() override {}
  const atlas::engine::Tokenizer& tokenizer() const override { return tok_; }
  int context_length() const override { return 0; }
  nlohmann::json provenance() const override { return {}; }
  int max_in_flight() const { return max_in_flight_; }

 private:
  std::chrono::milliseconds latency_;
  std::atomic<int> in_flight_{0}, max_in_flight_{0};
  atlas::test::ByteTokenizer tok_;
};

TargetRequest request_n(int i) {
  TargetRequest r;
  r.max_new_tokens = i;
  return r;
}
}  // namespace

TEST_CASE("load: the Poisson schedule is seeded, increasing, with mean gap 1/rate") {
  const auto a = poisson_schedule(4000, 100.0, 42);
  CHECK(a == poisson_schedule(4000, 100.0, 42));
  CHECK(a != poisson_schedule(4000, 100.0, 43));
  CHECK(std::is_sorted(a.begin(), a.end()));
  const double mean_gap_ms = static_cast<double>(a.back()) / 1e6 / 4000.0;
  CHECK(mean_gap_ms == doctest::Approx(10.0).epsilon(0.05));
}

TEST_CASE("load: fixed concurrency keeps exactly N requests in flight and sends each request once") {
  SlowTarget t(std::chrono::milliseconds(20));
  LoadOptions o;
  o.concurrency = 3;
  o.max_requests = 12;
  const auto samples = run_load(t, request_n, o).samples;
  REQUIRE(samples.size() == 12);
  for (int i = 0; i < 12; ++i) {
    CHECK(samples[static_cast<std::size_t>(i)].index == i);
    CHECK(samples[static_cast<std::size_t>(i)].response.completion_tokens == i);  // built by make_request(i)
  }
  CHECK(t.max_in_flight() == 3);
}

TEST_CASE("load: Poisson arrivals are sent on schedule even when the target is slow (no coordinated omission)") {
  SlowTarget t(std::chrono::milliseconds(150));
  LoadOptions o;
  o.arrival = Arrival::poisson;
  o.rate_per_s = 40.0;
  o.seed = 7;
  o.max_requests = 10;
  const auto samples = run_load(t, request_n, o).samples;
  REQUIRE(samples.size() == 10);
  std::vector<double> lag_ms;
  for (const auto& s : samples) lag_ms.push_back(static_cast<double>(s.response.t_request_ns - s.t_intended_ns) / 1e6);
  std::sort(lag_ms.begin(), lag_ms.end());
  CHECK(lag_ms.front() >= 0.0);
  // A closed loop serves one request at a time: request k would start ~150 k ms after its
  // intended time minus k x 25 ms (the mean gap), so its median lag is several hundred ms. Half
  // one service time separates the two even on a loaded 2-core box, where the sender thread
  // itself can wake 5-15 ms late (measured 2026-12-01 at load average 12).
  CHECK(lag_ms[lag_ms.size() / 2] < 75.0);
  CHECK(t.max_in_flight() > 1);
}

TEST_CASE("load: a level stops after N requests in a row got no response byte, in either loop") {
  for (Arrival arrival : {Arrival::fixed_concurrency, Arrival::poisson}) {
    INFO(static_cast<int>(arrival));
    SlowTarget t(std::chrono::milliseconds(1));
    t.dies_after = 4;
    LoadOptions o;
    o.arrival = arrival;
    o.concurrency = 1;
    o.rate_per_s = 200;
    o.max_requests = 40;
    o.stop_after_connection_failures = 5;
    const LoadRun run = run_load(t, request_n, o);
    CHECK(run.stopped_on_connection_failures);
    if (arrival == Arrival::fixed_concurrency) {
      // One at a time: 4 answered, then 5 failures in a row stop it.
      CHECK(run.samples.size() == 9);
      CHECK(t.sent == 9);
    } else {
      // "In a row" is in completion order: an answered request that overlapped the first
      // failures (Poisson gaps below its 1 ms) resets the count, and arrivals already on their
      // way when the fifth failure lands still go; far fewer than the 40 scheduled.
      CHECK(run.samples.size() >= 9);
      CHECK(run.samples.size() <= 20);
      CHECK(t.sent <= 20);
    }
  }
  SlowTarget t(std::chrono::milliseconds(1));
  t.dies_after = 4;
  LoadOptions o;
  o.max_requests = 12;
  o.stop_after_connection_failures = 0;  // never stop: every request is sent
  const LoadRun all = run_load(t, request_n, o);
  CHECK_FALSE(all.stopped_on_connection_failures);
  CHECK(all.samples.size() == 12);
}

TEST_CASE("load: an open loop's max_concurrency caps the requests in flight; the wait is not send lag") {
  SlowTarget t(std::chrono::milliseconds(60));
  LoadOptions o;
  o.arrival = Arrival::poisson;
  o.rate_per_s = 200;  // ~5 ms apart: 12 would overlap without the cap
  o.seed = 3;
  o.max_requests = 12;
  o.max_concurrency = 2;
  const LoadRun run = run_load(t, request_n, o);
  REQUIRE(run.samples.size() == 12);
  CHECK(t.max_in_flight() == 2);
  int waited = 0;
  for (const auto& s : run.samples) {
    CHECK(s.t_ready_ns >= s.t_intended_ns);
    waited += s.t_ready_ns > s.t_intended_ns + 10'000'000;
    // Send lag counts from the slot: well below the cap's wait (up to several 60 ms services).
    CHECK(static_cast<double>(s.response.t_request_ns - s.t_ready_ns) / 1e6 < 40.0);
  }
  CHECK(waited >= 6);
  LoadOptions bad = o;
  bad.max_concurrency = -1;
  CHECK_THROWS_AS(run_load(t, request_n, bad), atlas::InputError);
}

TEST_CASE("load: bounded in time; invalid options are input errors") {
  SlowTarget t(std::chrono::milliseconds(1));
  LoadOptions o;
  o.arrival = Arrival::poisson;
  o.rate_per_s = 20.0;
  o.seed = 1;
  o.max_requests = 1000;
  o.max_duration = std::chrono::milliseconds(300);
  const auto schedule = poisson_schedule(1000, 20.0, 1);
  const auto expected = std::count_if(schedule.begin(), schedule.end(), [](std::int64_t x) { return x < 300'000'000; });
  const auto samples = run_load(t, request_n, o).samples;
  CHECK(static_cast<long>(samples.size()) == expected);
  LoadOptions bad;
  bad.concurrency = 0;
  CHECK_THROWS_AS(run_load(t, request_n, bad), atlas::InputError);
  bad = LoadOptions{};
  bad.arrival = Arrival::poisson;
  bad.rate_per_s = 0;
  CHECK_THROWS_AS(run_load(t, request_n, bad), atlas::InputError);
}

#include "records/summary.hpp"
#include "suites/endpoint/load_suite.hpp"
#include "suites/error.hpp"

namespace {
/// A server-like target: 2 ms to the first token, then 1 ms per token, several in flight.
class FakeServer final : public atlas::suites::Target {
 public:
  int cached = 0;                       ///< cached_tokens every response reports
  std::atomic<int> cold_requests{0};    ///< requests sent with TargetRequest::cold
  std::atomic<int> all_requests{0};
  std::string name() const override { return "endpoint:fake"; }
  int dies_after = 1 << 30;             ///< later requests fail without a response byte
  /// Requests number [refuse_from, refuse_to) (1-based, in send order), every other one, are
  /// answered `refuse_status` at once: a full queue (429) or a server going away (503).
  int refuse_from = 0, refuse_to = 0, refuse_status = 429;
  int first_read = 1;                   ///< tokens stamped with the first token's time
  TargetResponse generate(const TargetRequest& req) override {
    TargetResponse r;
    const int n = ++all_requests;
    if (n > dies_after) {
      r.ok = false;
      r.t_request_ns = atlas::now_ns();
      r.error = "connect failed: Connection refused";
      return r;
    }
    if (n >= refuse_from && n < refuse_to && (n - refuse_from) % 2 == 0) {
      r.ok = false;
      r.t_request_ns = atlas::now_ns();
      r.t_first_byte_ns = r.t_end_ns = atlas::now_ns();
      r.http_status = refuse_status;
      r.error = "HTTP " + std::to_string(refuse_status) + ": server busy";
      return r;
    }
    cold_requests += req.cold;
    r.cached_tokens = cached;
    r.t_request_ns = atlas::now_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    for (int i = 0; i < req.max_new_tokens; ++i) {
      if (i >= first_read) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      r.token_t_ns.push_back(i > 0 && i < first_read ? r.token_t_ns.front() : atlas::now_ns());
    }
    r.completion_tokens = req.max_new_tokens;
    r.prompt_tokens = static_cast<int>(req.prompt_ids.size());
    r.server_timings = {{"prompt_ms", 2.0}, {"predicted_ms", 1.0 * (req.max_new_tokens - 1)}, {"predicted_n", req.max_new_tokens}};
    r.t_end_ns = atlas::now_ns();
    return r;
  }
  void reset_session() override {}
  const atlas::engine::Tokenizer& tokenizer() const override { return tok_; }
  int context_length() const override { return 512; }
  nlohmann::json provenance() const override { return {}; }

 private:
  atlas::test::ByteTokenizer tok_;
};
}  // namespace

TEST_CASE("load suite: one record holds every concurrency level with throughput, percentiles and server timings") {
  FakeServer t;
  atlas::suites::SuiteOptions o;
  o.config = {{"concurrency", {1, 2, 4}}, {"num_prompts", 8}, {"input_len", 16}, {"output_len", 6},
              {"goodput", {{"ttft_ms", 1000}}}, {"max_send_lag_ms", 1000}};
  o.config_source = "<test>";
  const auto r = atlas::suites::run_load_suite(t, o);
  REQUIRE(r.details["levels"].size() == 3);
  for (const char* L : {"concurrency=1", "concurrency=2", "concurrency=4"}) {
    INFO(L);
    const std::string p = std::string(L) + "/";
    CHECK(r.metrics.at(p + "ttft_ms").samples.size() == 8);
    CHECK(r.metrics.at(p + "tpot_ms").samples.size() == 8);
    CHECK(r.metrics.at(p + "itl_ms").samples.size() == 8 * 5);
    CHECK(r.metrics.at(p + "failed_requests").samples == std::vector<double>{0});
    CHECK(r.metrics.at(p + "request_throughput").samples.at(0) > 0);
    // All 48 output tokens counted; goodput = throughput when every request meets the SLO.
    CHECK(r.metrics.at(p + "goodput_req_s").samples.at(0) == doctest::Approx(r.metrics.at(p + "request_throughput").samples.at(0)));
  }
  // One percentile computation: details.levels shows what the metrics' summaries (the printed
  // table) show for the same level (they disagreed: nearest-rank vs type 7).
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& row = r.details["levels"][i];
    for (const char* m : {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "send_lag_ms"}) {
      INFO(row["level"].get<std::string>() << " " << m);
      const auto& samples = r.metrics.at(row["level"].get<std::string>() + "/" + m).samples;
      const atlas::records::Summary s = atlas::records::summarize(samples);
      CHECK(row[m]["n"] == samples.size());
      CHECK(row[m]["p50"].get<double>() == s.p50);
      CHECK(row[m]["p90"].get<double>() == s.p90);
      CHECK(row[m]["p99"].get<double>() == s.p99);
    }
  }
  const auto& lvl = r.details["levels"][2];
  CHECK(lvl["valid"] == true);
  CHECK(lvl["completed"] == 8);
  CHECK(lvl["server"]["tpot_ms"]["p50"] == doctest::Approx(1.0));
  // Each request's row carries its own server timings (the fake reports prompt_ms 2 and
  // predicted_ms 1 per token after the first).
  REQUIRE(lvl["request_rows"].size() == 8);
  for (const auto& row : lvl["request_rows"]) {
    CHECK(row["server_prompt_ms"] == doctest::Approx(2.0));
    CHECK(row["server_tpot_ms"] == doctest::Approx(1.0));
  }
  CHECK(lvl["tpot_ms"]["p50"].get<double>() >= 1.0);
  CHECK_FALSE(r.details.contains("invalid_reason"));
  // Throughput rises with concurrency on a server that runs requests side by side.
  CHECK(r.details["levels"][2]["request_throughput"].get<double>() > 1.5 * r.details["levels"][0]["request_throughput"].get<double>());
}

TEST_CASE("load suite: every request is cold; a response served from the prefix cache invalidates its level") {
  atlas::suites::SuiteOptions o;
  o.config = {{"concurrency", {2}}, {"num_prompts", 4}, {"input_len", 16}, {"output_len", 2}, {"max_send_lag_ms", 1000}};
  o.config_source = "<test>";
  FakeServer cold;
  cold.cached = 1;  // a shared BOS: still cold
  const auto a = atlas::suites::run_load_suite(cold, o);
  CHECK(cold.all_requests == 4);
  CHECK(cold.cold_requests == 4);  // llama.cpp gets cache_prompt false for each (EndpointTarget)
  CHECK(a.details["levels"][0]["valid"] == true);
  CHECK(a.details["levels"][0]["cached_requests"] == 0);
  CHECK_FALSE(a.details.contains("invalid_reason"));
  FakeServer warm;
  warm.cached = 9;
  const auto b = atlas::suites::run_load_suite(warm, o);
  CHECK(b.details["levels"][0]["valid"] == false);
  CHECK(b.details["levels"][0]["cached_requests"] == 4);
  CHECK(b.details["invalid_reason"] ==
        "concurrency=2: 4 of 4 requests were served from the prefix cache (cached_tokens up to 9 > 1): not cold");
}

TEST_CASE("load suite: a client that falls behind its schedule invalidates the level; bad configs name the field") {
  FakeServer t;
  atlas::suites::SuiteOptions o;
  o.config = {{"concurrency", {2}}, {"num_prompts", 4}, {"input_len", 8}, {"output_len", 2}, {"max_send_lag_ms", 0}};
  o.config_source = "<test>";
  // max_send_lag_ms 0: any lag at all counts as falling behind (a closed loop always has some).
  const auto r = atlas::suites::run_load_suite(t, o);
  CHECK(r.details["levels"][0]["valid"] == false);
  CHECK(r.details["invalid_reason"].get<std::string>().find("concurrency=2: the client fell behind its schedule") == 0);

  o.config = {{"concurrency", {2}}, {"rates", {1.0}}};
  CHECK_THROWS_WITH_AS(atlas::suites::run_load_suite(t, o), doctest::Contains("exactly one of 'concurrency'"), atlas::suites::SuiteError);
  o.config = {{"rates", {2.0}}, {"goodput", {{"ttfb", 3}}}};
  CHECK_THROWS_WITH_AS(atlas::suites::run_load_suite(t, o), doctest::Contains("unknown SLO 'ttfb'"), atlas::suites::SuiteError);
  SlowTarget in_process(std::chrono::milliseconds(1));
  o.config = {{"concurrency", {1}}};
  CHECK_THROWS_WITH_AS(atlas::suites::run_load_suite(in_process, o), doctest::Contains("use --endpoint URL"), atlas::suites::SuiteError);
}

TEST_CASE("load suite: a server that dies mid-level stops the level; rates count completed requests, failures beside them") {
  FakeServer t;
  t.dies_after = 6;
  atlas::suites::SuiteOptions o;
  o.config = {{"concurrency", {1}}, {"num_prompts", 40}, {"input_len", 16}, {"output_len", 4}, {"max_send_lag_ms", 1000}};
  o.config_source = "<test>";
  const auto r = atlas::suites::run_load_suite(t, o);
  const auto& lvl = r.details["levels"][0];
  CHECK(lvl["completed"] == 6);
  CHECK(lvl["failed"] == 5);          // five connection failures in a row stop the level
  CHECK(lvl["connection_failures"] == 5);
  CHECK(lvl["not_sent"] == 29);
  CHECK(lvl["stopped_on_connection_failures"] == true);
  CHECK(t.all_requests == 11);
  CHECK(lvl["total_output_tokens"] == 24);  // completed requests only
  CHECK(r.metrics.at("concurrency=1/failed_requests").samples == std::vector<double>{5});
  CHECK(r.metrics.at("concurrency=1/ttft_ms").samples.size() == 6);
  const std::string why = r.details["invalid_reason"];
  CHECK(why.find("concurrency=1: 5 of 11 requests failed (5 without a response byte; first: connect failed") == 0);
  CHECK(why.find("stopped after 5 connection failures in a row (29 requests not sent)") != std::string::npos);
  REQUIRE(r.details["notes"].size() == 1);
  CHECK(r.details["notes"][0].get<std::string>().find("concurrency=1: 5 of 11 requests FAILED (29 not sent): its rates (") == 0);
  CHECK(r.details["notes"][0].get<std::string>().find("count the 6 that completed") != std::string::npos);
  int failed_rows = 0;
  for (const auto& row : lvl["request_rows"]) failed_rows += row["status"] == "failed";
  CHECK(failed_rows == 5);
}

TEST_CASE("load suite: per-request rows hold TTFT + sum(ITL) = E2E and TPOT = (E2E - TTFT) / gaps; token totals") {
  FakeServer t;
  atlas::suites::SuiteOptions o;
  o.config = {{"concurrency", {2}}, {"num_prompts", 6}, {"input_len", 16}, {"output_len", 5}, {"max_send_lag_ms", 1000}};
  o.config_source = "<test>";
  const auto r = atlas::suites::run_load_suite(t, o);
  const auto& lvl = r.details["levels"][0];
  REQUIRE(lvl["request_rows"].size() == 6);
  for (const auto& row : lvl["request_rows"]) {
    INFO(row.dump());
    CHECK(row["status"] == "ok");
    double sum = 0;
    for (double g : row["itl_ms"]) sum += g;
    CHECK(row["itl_ms"].size() == 4);
    CHECK(row["ttft_ms"].get<double>() + sum == doctest::Approx(row["e2e_ms"].get<double>()).epsilon(1e-9));
    CHECK(row["tpot_ms"].get<double>() ==
          doctest::Approx((row["e2e_ms"].get<double>() - row["ttft_ms"].get<double>()) / 4).epsilon(1e-9));
    CHECK(row["t_sent_ms"].get<double>() >= row["t_intended_ms"].get<double>());
    CHECK(row["input_tokens"] == 16);
    CHECK(row["output_tokens"] == 5);
  }
  CHECK(lvl["total_input_tokens"] == 96);
  CHECK(lvl["total_output_tokens"] == 30);
  CHECK(r.metrics.at("concurrency=2/total_input_tokens").samples == std::vector<double>{96});
  const double out = r.metrics.at("concurrency=2/output_tok_s").samples.at(0);
  const double total = r.metrics.at("concurrency=2/total_tok_s").samples.at(0);
  CHECK(total == doctest::Approx(out * (96.0 + 30.0) / 30.0));
}

TEST_CASE("load suite: an open loop reports its realized rate; warm-up requests are sent, not measured; max_concurrency") {
  FakeServer t;
  atlas::suites::SuiteOptions o;
  o.config = {{"rates", {50.0}}, {"num_prompts", 8}, {"input_len", 16}, {"output_len", 3}, {"max_send_lag_ms", 1000},
              {"warmup_requests", 3}, {"max_concurrency", 2}};
  o.config_source = "<test>";
  const auto r = atlas::suites::run_load_suite(t, o);
  CHECK(t.all_requests == 11);
  const auto& lvl = r.details["levels"][0];
  CHECK(lvl["requests"] == 8);
  CHECK(lvl["warmup_requests"] == 3);
  CHECK(lvl["max_concurrency"] == 2);
  CHECK(r.metrics.at("rate=50/ttft_ms").samples.size() == 8);
  CHECK(lvl["requested_rate"] == 50.0);
  CHECK(lvl["realized_rate"].get<double>() > 0);
  CHECK(lvl["realized_rate_band_95"].get<double>() == doctest::Approx(1.96 / std::sqrt(8.0)));
  bool noted = false;
  for (const auto& n : r.details["notes"]) noted = noted || n.get<std::string>().find("rate=50: realized arrival rate ") == 0;
  CHECK(noted);
  o.config = {{"concurrency", {2}}, {"max_concurrency", 2}};
  CHECK_THROWS_WITH_AS(atlas::suites::run_load_suite(t, o), doctest::Contains("'max_concurrency' caps an open loop"),
                       atlas::suites::SuiteError);
}

TEST_CASE("load suite: a one-token request has no TPOT and meets a tpot_ms SLO (vLLM's rule), counted") {
  FakeServer t;
  atlas::suites::SuiteOptions o;
  o.config = {{"concurrency", {1}}, {"num_prompts", 3}, {"input_len", 16}, {"output_len", 1}, {"max_send_lag_ms", 1000},
              {"goodput", {{"tpot_ms", 0.001}}}};
  o.config_source = "<test>";
  const auto r = atlas::suites::run_load_suite(t, o);
  const auto& lvl = r.details["levels"][0];
  CHECK(lvl["goodput_tpot_undefined_requests"] == 3);
  CHECK(r.metrics.at("concurrency=1/tpot_ms").samples.empty());
  CHECK(r.metrics.at("concurrency=1/goodput_req_s").samples.at(0) ==
        doctest::Approx(r.metrics.at("concurrency=1/request_throughput").samples.at(0)));
}

TEST_CASE("load suite: an overloaded level (HTTP 429) is marked, not invalid; the levels below stay valid; levels run in order") {
  FakeServer t;
  atlas::suites::SuiteOptions o;
  // Listed out of order: the sweep runs 1, 2, 8 and the third level (requests 17..24) is refused
  // every other request, as a server whose queue is full.
  o.config = {{"concurrency", {8, 1, 2}}, {"num_prompts", 8}, {"input_len", 16}, {"output_len", 3}, {"max_send_lag_ms", 1000}};
  o.config_source = "<test>";
  t.refuse_from = 17;
  t.refuse_to = 25;
  const auto r = atlas::suites::run_load_suite(t, o);
  REQUIRE(r.details["levels"].size() == 3);
  CHECK(r.details["levels"][0]["level"] == "concurrency=1");
  CHECK(r.details["levels"][1]["level"] == "concurrency=2");
  const auto& hot = r.details["levels"][2];
  CHECK(hot["level"] == "concurrency=8");
  CHECK(hot["overloaded"] == true);
  CHECK(hot["overloaded_requests"] == 4);
  CHECK(hot["failed"] == 4);
  CHECK(hot["completed"] == 4);
  CHECK(hot["valid"] == true);
  CHECK(hot["overload_reason"] == "4 of 8 requests refused by the server for load (HTTP 429; first: HTTP 429: server busy)");
  for (int i = 0; i < 2; ++i) {
    CHECK(r.details["levels"][i]["valid"] == true);
    CHECK(r.details["levels"][i]["overloaded"] == false);
  }
  // The record stays valid: no invalid_reason, the saturation point named.
  CHECK_FALSE(r.details.contains("invalid_reason"));
  CHECK(r.details["overloaded_levels"] == nlohmann::json::array({"concurrency=8"}));
  std::vector<std::string> notes;
  for (const auto& n : r.details["notes"]) notes.push_back(n.get<std::string>());
  CHECK(std::find(notes.begin(), notes.end(),
                  "saturation: the server refused requests for load (HTTP 429) at concurrency=8; the highest level served "
                  "in full was concurrency=2") != notes.end());
  bool marked = false;
  for (const auto& n : notes) marked = marked || n.find("concurrency=8: OVERLOADED: 4 of 8 requests refused") == 0;
  CHECK(marked);
  CHECK(r.metrics.at("concurrency=8/failed_requests").samples == std::vector<double>{4});
  CHECK(r.metrics.at("concurrency=8/ttft_ms").samples.size() == 4);

  // A 503 is not an overload signal (a server shutting down answers it too): the level is invalid.
  FakeServer gone;
  gone.refuse_from = 17;
  gone.refuse_to = 25;
  gone.refuse_status = 503;
  const auto g = atlas::suites::run_load_suite(gone, o);
  CHECK(g.details["levels"][2]["valid"] == false);
  CHECK(g.details["levels"][2]["overloaded"] == false);
  CHECK(g.details["invalid_reason"].get<std::string>().find("concurrency=8: 4 of 8 requests failed") == 0);
  CHECK_FALSE(g.details.contains("overloaded_levels"));

  o.config = {{"concurrency", {2, 4, 2}}};
  CHECK_THROWS_WITH_AS(atlas::suites::run_load_suite(t, o), doctest::Contains("field 'concurrency' lists level 2 twice"),
                       atlas::suites::SuiteError);
}

TEST_CASE("load suite: ITL samples short of completed x (output_len - 1) are accounted for by the first reads") {
  FakeServer t;
  t.first_read = 2;  // every request's first two tokens in one read: one gap each without a time
  atlas::suites::SuiteOptions o;
  o.config = {{"concurrency", {2}}, {"num_prompts", 6}, {"input_len", 16}, {"output_len", 5}, {"max_send_lag_ms", 1000}};
  o.config_source = "<test>";
  const auto r = atlas::suites::run_load_suite(t, o);
  const auto& lvl = r.details["levels"][0];
  CHECK(lvl["itl_expected"] == 6 * 4);
  CHECK(lvl["first_read_extra_tokens"] == 6);
  CHECK(lvl["output_shortfall_tokens"] == 0);
  CHECK(r.metrics.at("concurrency=2/itl_ms").samples.size() == 6 * 4 - 6);
  bool noted = false;
  for (const auto& n : r.details["notes"]) {
    noted = noted || n.get<std::string>() ==
                         "concurrency=2: 18 ITL samples, not 6 x 4 = 24: 6 tokens came in their request's first read "
                         "(no gap of their own)";
  }
  CHECK(noted);
}
