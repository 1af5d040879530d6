#include "suites/endpoint/load.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "common/clock.hpp"
#include "common/error.hpp"

namespace atlas::suites::endpoint {

namespace {
/// Send times (ns after the start) of `n` requests whose gaps in seconds `gap` draws from a
/// generator seeded with `seed`.
template <class GapDistribution>
std::vector<std::int64_t> cumulative_gaps(int n, GapDistribution gap, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> t(static_cast<std::size_t>(std::max(0, n)));
  double s = 0.0;
  for (auto& x : t) {
    s += gap(rng);
    x = static_cast<std::int64_t>(s * 1e9);
  }
  return t;
}
}  // namespace

std::vector<std::int64_t> poisson_schedule(int n, double rate_per_s, std::uint64_t seed) {
  return cumulative_gaps(n, std::exponential_distribution<double>(rate_per_s), seed);
}

std::vector<std::int64_t> arrival_schedule(int n, double rate_per_s, double burstiness, std::uint64_t seed) {
  if (burstiness == 1.0) return poisson_schedule(n, rate_per_s, seed);
  return cumulative_gaps(n, std::gamma_distribution<double>(burstiness, 1.0 / (rate_per_s * burstiness)), seed);
}

namespace {
constexpr std::int64_t kSpawnLeadNs = 20'000'000;  // 20 ms

void sleep_until_ns(std::int64_t t_ns) {
  const std::int64_t now = atlas::now_ns();
  if (t_ns > now) std::this_thread::sleep_for(std::chrono::nanoseconds(t_ns - now));
}
}  // namespace

bool connection_failed(const TargetResponse& r) { return !r.ok && r.t_first_byte_ns == 0; }

LoadRun run_load(Target& target, const std::function<TargetRequest(int)>& make_request, const LoadOptions& opts) {
  if (opts.max_requests < 0) throw atlas::InputError("load: max_requests must be >= 0, got " + std::to_string(opts.max_requests));
  if (opts.arrival == Arrival::fixed_concurrency && opts.concurrency < 1) {
    throw atlas::InputError("load: concurrency must be >= 1, got " + std::to_string(opts.concurrency));
  }
  if (opts.arrival == Arrival::poisson && !(opts.rate_per_s > 0.0)) {
    throw atlas::InputError("load: request rate must be > 0 per second, got " + std::to_string(opts.rate_per_s));
  }
  if (opts.arrival == Arrival::poisson && !(opts.burstiness > 0.0)) {
    throw atlas::InputError("load: burstiness must be > 0, got " + std::to_string(opts.burstiness));
  }
  if (opts.max_concurrency < 0) throw atlas::InputError("load: max_concurrency must be >= 0, got " + std::to_string(opts.max_concurrency));
  LoadRun run;
  std::mutex mu;
  std::condition_variable slot_freed;
  int in_flight = 0;
  int consecutive_connection_failures = 0;
  std::atomic<bool> stop{false};
  const std::int64_t t0 = atlas::now_ns();
  run.t_start_ns = t0;
  const std::int64_t deadline = t0 + static_cast<std::int64_t>(opts.max_duration.count()) * 1'000'000;
  const int cap = opts.arrival == Arrival::poisson ? opts.max_concurrency : 0;

  auto send = [&](int i, std::int64_t intended) {
    LoadSample s;
    s.index = i;
    s.t_intended_ns = intended;
    s.t_ready_ns = intended;
    if (cap > 0) {
      std::unique_lock lock(mu);
      slot_freed.wait(lock, [&] { return in_flight < cap; });
      ++in_flight;
      s.t_ready_ns = std::max(intended, atlas::now_ns());
    }
    if (stop) {  // the run stopped while this arrival waited for its slot: not sent
      std::lock_guard lock(mu);
      if (cap > 0) --in_flight;
      slot_freed.notify_one();
      return;
    }
    TargetRequest req = make_request(i);
    s.response = target.generate(req);
    std::lock_guard lock(mu);
    if (cap > 0) --in_flight;
    slot_freed.notify_one();
    consecutive_connection_failures = connection_failed(s.response) ? consecutive_connection_failures + 1 : 0;
    if (opts.stop_after_connection_failures > 0 && consecutive_connection_failures >= opts.stop_after_connection_failures) {
      stop = true;
    }
    run.samples.push_back(std::move(s));
  };

  if (opts.arrival == Arrival::fixed_concurrency) {
    std::atomic<int> next{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < std::min(opts.concurrency, std::max(1, opts.max_requests)); ++w) {
      workers.emplace_back([&] {
        std::int64_t ready = t0;  // the worker may send its next request from this moment
        while (true) {
          if (atlas::now_ns() >= deadline || stop) return;
          const int i = next.fetch_add(1);
          if (i >= opts.max_requests) return;
          send(i, ready);
          ready = atlas::now_ns();
        }
      });
    }
    for (auto& t : workers) t.join();
  } else {
    const auto schedule = arrival_schedule(opts.max_requests, opts.rate_per_s, opts.burstiness, opts.seed);
    std::vector<std::thread> inflight;
    for (int i = 0; i < opts.max_requests && !stop; ++i) {
      const std::int64_t at = t0 + schedule[static_cast<std::size_t>(i)];
      if (at >= deadline) break;
      // The thread starts ahead of its time and waits for it itself: thread creation (slow on
      // a loaded box) stays out of the request's send lag.
      sleep_until_ns(at - kSpawnLeadNs);
      if (stop) break;
      inflight.emplace_back([&send, i, at] {
        sleep_until_ns(at);
        send(i, at);
      });
    }
    for (auto& t : inflight) t.join();
  }
  run.stopped_on_connection_failures = stop;
  std::sort(run.samples.begin(), run.samples.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return run;
}

}  // namespace atlas::suites::endpoint
