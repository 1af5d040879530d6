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
#include "suites/run_queue_wait.hpp"
#include "suites/ttft/ttft_suite.hpp"
#include "tests/skip.hpp"
#include "tests/test_data.hpp"

using namespace atlas::suites;

TEST_CASE("schedstat: the wait is the second field") {
  CHECK(parse_schedstat_wait_ns("123 456 7") == 456);
  CHECK(parse_schedstat_wait_ns("123 456 7\n") == 456);
  CHECK_FALSE(parse_schedstat_wait_ns("123"));
  CHECK_FALSE(parse_schedstat_wait_ns("a b c"));
}

TEST_CASE("process run-queue wait: two busy threads on one CPU each wait about half the time") {
  const auto before = process_run_queue_wait_ns();
  if (!before) ATLAS_SKIP("no /proc/self/task/*/schedstat here (not Linux, or a kernel without schedstats)");
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  std::atomic<bool> pinned_ok{true};
  auto burn = [&] {
    if (sched_setaffinity(0, sizeof one, &one) != 0) pinned_ok = false;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    volatile unsigned x = 1;
    while (std::chrono::steady_clock::now() < end) x = x * 1664525u + 1013904223u;
  };
  // Measured while the threads still exist: an exited thread takes its wait with it.
  std::atomic<int> done{0};
  std::int64_t during = 0;
  std::thread a([&] { burn(); ++done; while (done < 3) std::this_thread::yield(); });
  std::thread b([&] { burn(); ++done; while (done < 3) std::this_thread::yield(); });
  while (done < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  during = process_run_queue_wait_ns().value_or(0) - *before;
  done = 3;
  a.join();
  b.join();
  if (!pinned_ok) ATLAS_SKIP("sched_setaffinity to CPU 0 refused here");
  // 2 x 300 ms of CPU on one core: each thread runs about half of its wall time; together they
  // wait >= ~300 ms (more if a neighbour shares the core). A lower bound well below that:
  CHECK(during > 100'000'000);
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
  if (!process_run_queue_wait_ns()) ATLAS_SKIP("no schedstat here");
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
  // A wait cannot exceed the threads' wall time by much: here one decode thread (and the caller).
  CHECK(*resp.run_queue_wait_ns <= 2 * (resp.t_end_ns - resp.t_request_ns) + 1'000'000);
}
