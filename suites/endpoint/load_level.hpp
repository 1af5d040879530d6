#pragma once
// The figures of one load level (suites/endpoint/load_suite.hpp) from its samples: latency
// samples, counts, totals, the span the rates are computed over, and one row per request.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/endpoint/load.hpp"

namespace atlas::suites {

struct LoadLevelInputs {
  int output_len = 0;                                ///< tokens each request asked for
  nlohmann::json goodput = nlohmann::json::object();  ///< SLOs: ttft_ms, tpot_ms, e2e_ms
  int allowed_cached = 0;                            ///< cached_tokens a cold request may report
};

struct LoadLevelFigures {
  std::vector<double> ttft_ms, tpot_ms, itl_ms, e2e_ms, send_lag_ms;
  std::vector<double> server_prompt_ms, server_tpot_ms;  ///< llama.cpp timings, where reported
  int sent = 0;                 ///< requests sent (samples)
  int completed = 0;            ///< ok with at least one token
  int failed = 0;
  int connection_failures = 0;  ///< failed without a response byte (endpoint::connection_failed)
  /// Failed because the server refused them for load (HTTP 429 Too Many Requests, RFC 6585: a
  /// full queue, a rate limit): the level is past the server's saturation point, not broken.
  int overloaded = 0;
  int good = 0;                 ///< completed requests meeting every SLO
  /// Completed requests without a TPOT (one output token, or every token in one read) while a
  /// tpot_ms SLO is set: they meet it (vLLM bench serve's rule; docs/metrics.md).
  int goodput_tpot_undefined = 0;
  int output_length_mismatches = 0, first_read_extra_tokens = 0, decode_undefined_requests = 0;
  int cached_requests = 0, max_cached = 0;
  long long input_tokens = 0;   ///< server-counted prompt tokens of the completed requests
  long long output_tokens = 0;  ///< server-counted output tokens of the completed requests
  /// First send (any request) to the last token of a completed request, s; 0 when none completed.
  double span_s = 0;
  /// Sends per second: (sent - 1) / (last send - first send); 0 with fewer than 2 sends.
  double realized_rate = 0;
  std::string first_error;           ///< the first failure that is not an overload refusal
  std::string first_overload_error;  ///< the first HTTP 429's error text
  /// ITL samples a level should have, completed x (output_len - 1), and what accounts for each
  /// one it lacks (docs/metrics.md): the tokens that came in a request's first read (no gap of
  /// their own: first_read_extra_tokens) and output_len - n of every request that returned
  /// fewer tokens than asked (output_shortfall_tokens). itl_ms.size() = itl_expected -
  /// first_read_extra_tokens - output_shortfall_tokens + output_excess_tokens.
  long long itl_expected = 0;
  long long output_shortfall_tokens = 0, output_excess_tokens = 0;
  /// One row per request in index order: index, t_intended_ms / t_sent_ms (from the level's
  /// start), send_lag_ms, status ("ok" | "failed"), error, ttft_ms, tpot_ms, itl_ms (the
  /// request's gaps), e2e_ms, input_tokens, output_tokens, cached_tokens, first_read_tokens.
  /// Per row: ttft_ms + sum(itl_ms) = e2e_ms, tpot_ms = (e2e_ms - ttft_ms) / itl_ms.size().
  nlohmann::json requests = nlohmann::json::array();

  double per_s(double x) const { return span_s > 0 ? x / span_s : 0.0; }
};

/// A request the server refused for load: HTTP 429. A 503 stays an ordinary failure: it is
/// also what a server that is shutting down or still loading answers (atlas-serve's drain,
/// llama-server's model load), which says nothing about the level's load.
bool is_overload_refusal(const TargetResponse& r);

LoadLevelFigures summarize_load_level(const endpoint::LoadRun& run, const LoadLevelInputs& in);

}  // namespace atlas::suites
