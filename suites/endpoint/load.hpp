#pragma once
// Load generation against a Target (usually an EndpointTarget):
//  - fixed concurrency (closed loop): `concurrency` workers each send their next request as
//    soon as their previous one completes;
//  - Poisson arrivals (open loop) at `rate_per_s`: send times are drawn up front from a seeded
//    exponential distribution and every request is sent at its scheduled time on its own
//    thread, however many are still in flight, so a slow server cannot delay the schedule
//    (no coordinated omission). Each sample keeps the intended and the actual send time.
// Both stop after `max_requests` requests or when `max_duration` has passed since the start
// (no new request is sent after that; those in flight finish, bounded by the target's timeouts),
// and after `stop_after_connection_failures` requests in a row that got no response byte (a
// server that is gone: every further request would fail too, each after a connect timeout).
// An open loop may cap the requests in flight (`max_concurrency`, vLLM bench serve's
// --max-concurrency): an arrival that finds the cap reached waits for a slot, and its send lag
// is counted from the slot, not from its arrival (the wait is the cap's, not the client's lag).
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "suites/target.hpp"

namespace atlas::suites::endpoint {

enum class Arrival { fixed_concurrency, poisson };

struct LoadOptions {
  Arrival arrival = Arrival::fixed_concurrency;
  int concurrency = 1;              ///< fixed_concurrency: workers in flight
  double rate_per_s = 1.0;          ///< poisson: mean arrivals per second
  /// poisson: gamma-distributed gaps of shape `burstiness` and mean 1/rate (vLLM bench serve's
  /// --burstiness): 1 = Poisson, < 1 burstier, > 1 more uniform.
  double burstiness = 1.0;
  std::uint64_t seed = 0;           ///< poisson schedule RNG (std::mt19937_64)
  /// poisson: most requests in flight at once (0: no cap).
  int max_concurrency = 0;
  int max_requests = 1;             ///< bound on requests sent
  std::chrono::milliseconds max_duration{60000};  ///< no request is sent after this
  /// No request is sent after this many consecutive requests without a response byte
  /// (connection refused or reset, connect or first-byte timeout); 0: never stop.
  int stop_after_connection_failures = 5;
};

struct LoadSample {
  int index = 0;                     ///< request number, 0-based, in schedule order
  /// Scheduled send time: poisson, the schedule; closed loop, the moment the worker's previous
  /// request completed (or the start). actual - intended is the client's own lag: a client
  /// that cannot keep up measures itself, not the server.
  std::int64_t t_intended_ns = 0;
  /// When the request could be sent: t_intended_ns, or later when an open loop's
  /// max_concurrency made it wait for a slot. Send lag = actual send - this.
  std::int64_t t_ready_ns = 0;
  TargetResponse response;           ///< response.t_request_ns is the actual send time
};

struct LoadRun {
  std::vector<LoadSample> samples;   ///< sorted by index
  std::int64_t t_start_ns = 0;       ///< the schedule's origin (atlas::now_ns)
  /// The run stopped after LoadOptions::stop_after_connection_failures connection failures in
  /// a row; max_requests - samples.size() requests were not sent.
  bool stopped_on_connection_failures = false;
};

/// A response that got no byte from the server: the connection failed or the server never
/// answered (connect refused/reset, connect or first-byte timeout).
bool connection_failed(const TargetResponse& r);

/// The poisson schedule: offsets (ns from start) of `n` arrivals with exponential gaps of mean
/// 1/rate, drawn from mt19937_64(seed). Deterministic for a seed.
std::vector<std::int64_t> poisson_schedule(int n, double rate_per_s, std::uint64_t seed);
/// Gaps from gamma(shape = burstiness, scale = 1/(rate * burstiness)) (mean 1/rate, as vLLM);
/// burstiness 1 is poisson_schedule exactly.
std::vector<std::int64_t> arrival_schedule(int n, double rate_per_s, double burstiness, std::uint64_t seed);

/// Runs the load; `make_request(i)` builds request i (called on the sending thread). Samples
/// come back sorted by index. Throws atlas::InputError for invalid options.
LoadRun run_load(Target& target, const std::function<TargetRequest(int)>& make_request,
                                 const LoadOptions& opts);

}  // namespace atlas::suites::endpoint
