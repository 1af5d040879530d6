#pragma once
// The load suite ("load"): serving benchmark of a server under concurrent requests, the way
// vLLM's `bench serve` measures it, swept over levels in one run:
//   closed loop  "concurrency": [1, 2, 4]   N requests in flight at all times
//   open loop    "rates": [2, 8]            arrivals per second, gamma gaps of shape
//                                           "burstiness" (1 = Poisson), whatever is in flight
// Each level sends "num_prompts" requests of "input_len" prompt tokens (unique random ids, so no
// prefix cache helps) asking for exactly "output_len" tokens (ignore_eos, min_tokens).
//
// Before each level's measured requests, "warmup_requests" (default 0) unmeasured ones at the
// same load. An open loop may cap its requests in flight ("max_concurrency", vLLM's
// --max-concurrency). A level stops sending after "stop_after_connection_failures" (default 5)
// requests in a row without a response byte (a server that is gone).
//
// Metrics per level L ("concurrency=4" or "rate=8"), from the client's timestamps:
//   L/ttft_ms, L/tpot_ms, L/itl_ms, L/e2e_ms   timed, one sample per request (ITL: per gap)
//   L/request_throughput   req/s   completed requests / (last token - first send)
//   L/output_tok_s         tok/s   server-counted output tokens of completed requests / the same span
//   L/total_tok_s          tok/s   server-counted input + output tokens / the same span (vLLM's
//                                  "total token throughput")
//   L/goodput_req_s        req/s   requests meeting every SLO in "goodput" / the same span
//                                  (only when an SLO is set: {"ttft_ms", "tpot_ms", "e2e_ms"};
//                                  a request without TPOT meets a tpot_ms SLO, as in vLLM)
//   L/failed_requests, L/total_input_tokens, L/total_output_tokens   counted
//   L/send_lag_ms          timed   actual - intended send time (load.hpp)
// Rates count completed requests only; a level where some failed gets a note (details.notes,
// printed under the table) with the failures beside its rates. An open loop's level gets the
// realized arrival rate beside the requested one, with the 95 % band a schedule of that many
// arrivals has. details.levels[].request_rows has one row per request (load_level.hpp).
// details["levels"] has per level the p50/p90/p99 of each latency (type 7: the same figures as
// the metrics' summaries and the printed table), the send lag, the server's own timings where
// it reports them (llama.cpp: median prompt_ms and predicted ms per token),
// output-length mismatches against the server's usage, "cached_requests", "itl_expected" with
// what accounts for a shortfall (load_level.hpp; a note says it when ITL samples fall short),
// "overloaded", and "valid". Levels run in ascending order (the list's order does not matter;
// a level listed twice is a config error). A level where the server refused requests for load
// (HTTP 429, load_level.hpp) is marked "overloaded" with the count and a note, not invalid: it
// is the saturation point a sweep exists to find, and the levels below it stay a valid sweep
// (details["overloaded_levels"], and a "saturation:" note naming the highest level served in
// full). A level is invalid when a request failed otherwise, when a request reported cached_tokens above a shared BOS
// (every load request is cold: TargetRequest::cold, a unique prompt), or when the client fell
// behind its own schedule (p99 send lag > "max_send_lag_ms", default 10): it then measured the
// client, not the server. Any invalid level makes the suite
// report details["invalid_reason"] (the record keeps every figure and is marked invalid; `run`
// exits 2, inconclusive).
#include "records/metric.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

struct LoadSuiteConfig {
  std::vector<int> concurrency;      ///< closed-loop levels
  std::vector<double> rates;         ///< open-loop levels (requests/s)
  double burstiness = 1.0;
  int num_prompts = 16;              ///< requests per level
  int input_len = 128;               ///< prompt tokens (BOS included)
  int output_len = 32;               ///< tokens asked for (exactly)
  double max_duration_s = 600;       ///< per level: no request is sent after this
  double max_send_lag_ms = 10;
  nlohmann::json goodput = nlohmann::json::object();  ///< SLOs: ttft_ms, tpot_ms, e2e_ms
  int warmup_requests = 0;           ///< per level: unmeasured requests sent first, at the level's load
  int max_concurrency = 0;           ///< open loop: most requests in flight (0: no cap)
  int stop_after_connection_failures = 5;  ///< per level; 0: never stop

  /// Reads the "load" section; throws SuiteError naming the source and field. Needs concurrency
  /// or rates (not both).
  static LoadSuiteConfig from(const SuiteOptions& options);
  nlohmann::json to_json() const;
};

/// Runs every level in order. Only endpoint targets can take concurrent requests: others throw
/// SuiteError ("use --endpoint").
records::SuiteResult run_load_suite(Target& target, const SuiteOptions& options);

}  // namespace atlas::suites
