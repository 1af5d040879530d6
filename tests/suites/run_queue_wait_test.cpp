// The run-queue wait taken out of the timed metrics (suites/run_queue_wait.hpp) and the metrics
// that carry it: the time a request had a CPU, for the paired timing judgement beside a neighbour.
#include <doctest/doctest.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "fake_target.hpp"
#include "suites/decode_anatomy/decode_anatomy_suite.hpp"
#include "suites/engine_target.hpp"
#include "common/schedstat.hpp"
#include "suites/run_queue_wait.hpp"
#include "suites/ttft/ttft_suite.hpp"
#include "tests/skip.hpp"
#include "tests/test_data.hpp"

using namespace atlas::suites;

TEST_CASE("schedstat: the wait is the second field") {
  CHECK(atlas::parse_schedstat_wait_ns("123 456 7") == 456);
  CHECK(atlas::parse_schedstat_wait_ns("123 456 7\n") == 456);
  CHECK_FALSE(atlas::parse_schedstat_wait_ns("123"));
  CHECK_FALSE(atlas::parse_schedstat_wait_ns("a b c"));
}

TEST_CASE("thread run-queue wait: two busy threads on one CPU each wait about half the time") {
  if (!thread_run_queue_wait_ns()) ATLAS_SKIP("no /proc/thread-self/schedstat here (not Linux, or a kernel without schedstats)");
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  std::atomic<bool> pinned_ok{true};
  std::int64_t waited[2] = {0, 0};
  auto burn = [&](int i) {
    if (sched_setaffinity(0, sizeof one, &one) != 0) pinned_ok = false;
    const auto w0 = thread_run_queue_wait_ns().value_or(0);
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    volatile unsigned x = 1;
    while (std::chrono::steady_clock::now() < end) x = x * 1664525u + 1013904223u;
    waited[i] = thread_run_queue_wait_ns().value_or(0) - w0;
  };
  const auto main_before = thread_run_queue_wait_ns().value_or(0);
  std::thread a(burn, 0), b(burn, 1);
  a.join();
  b.join();
  if (!pinned_ok) ATLAS_SKIP("sched_setaffinity to CPU 0 refused here");
  // Two 300 ms spinners on one core share it: together they wait >= ~300 ms (more if a
  // neighbour shares the core), each its own share. The joining thread slept: it barely waited.
  CHECK(waited[0] + waited[1] > 150'000'000);
  CHECK(waited[0] > 20'000'000);
  CHECK(waited[1] > 20'000'000);
  CHECK(thread_run_queue_wait_ns().value_or(0) - main_before < 100'000'000);
}

TEST_CASE("decode-anatomy: us_per_token_less_runqueue is the wall per token less the reported wait") {
  atlas::test::FakeTarget target;
  target.timing.run_queue_wait_ns = 20'000;  // 20 us per generated token
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 2;
  o.config = {{"prompt_tokens", 8}, {"decode_tokens", 5}};
  const auto r = run_decode_anatomy_suite(target, o);
  const auto& plain = r.metrics.at("us_per_token").samples;
  const auto& less = r.metrics.at("us_per_token_less_runqueue").samples;
  REQUIRE(less.size() == 2);
  CHECK(less[0] == doctest::Approx(plain[0] - 20.0));
  CHECK(r.metrics.at("us_per_token_less_runqueue").kind == atlas::records::MetricKind::timed);
  atlas::test::FakeTarget http_like;  // reports no wait: no corrected metric, never a made-up 0
  CHECK(run_decode_anatomy_suite(http_like, o).metrics.count("us_per_token_less_runqueue") == 0);
}

TEST_CASE("ttft: ttft_ms_less_runqueue is TTFT less the wait before the first token") {
  atlas::test::FakeTarget target;
  target.timing.run_queue_wait_ns = 300'000;  // 0.3 ms before the first token
  SuiteOptions o;
  o.warmup = 0;
  o.repetitions = 2;
  o.config = {{"lengths", {16}}, {"decode_tokens", 2}, {"warm", false}};
  const auto r = run_ttft_suite(target, o);
  const auto& ttft = r.metrics.at("ttft_ms/cold/len=16").samples;
  const auto& less = r.metrics.at("ttft_ms_less_runqueue/cold/len=16").samples;
  REQUIRE(less.size() == 2);
  CHECK(less[1] == doctest::Approx(ttft[1] - 0.3));
}

TEST_CASE("EngineTarget reports the run-queue wait of a request: to its first token and to its end") {
  if (!thread_run_queue_wait_ns()) ATLAS_SKIP("no schedstat here");
  atlas::engine::EngineOptions eo;
  eo.model = atlas::test::stories_bin().string();
  eo.tokenizer = atlas::test::stories_tok();
  eo.backend.threads = 1;
  EngineTarget t(eo);
  TargetRequest req;
  req.prompt_ids = {1, 20, 30, 40};
  req.max_new_tokens = 8;
  req.ignore_eos = true;
  const TargetResponse resp = t.generate(req);
  REQUIRE(resp.run_queue_wait_first_ns);
  REQUIRE(resp.run_queue_wait_ns);
  CHECK(*resp.run_queue_wait_first_ns >= 0);
  CHECK(*resp.run_queue_wait_ns >= *resp.run_queue_wait_first_ns);
  // One thread's wait cannot exceed the request's wall time (plus the reads around it).
  CHECK(*resp.run_queue_wait_ns <= (resp.t_end_ns - resp.t_request_ns) + 1'000'000);
}
