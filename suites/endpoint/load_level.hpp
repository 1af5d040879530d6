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
  std::string first_error;
  /// One row per request in index order: index, t_intended_ms / t_sent_ms (from the level's
  /// start), send_lag_ms, status ("ok" | "failed"), error, ttft_ms, tpot_ms, itl_ms (the
  /// request's gaps), e2e_ms, input_tokens, output_tokens, cached_tokens, first_read_tokens.
  /// Per row: ttft_ms + sum(itl_ms) = e2e_ms, tpot_ms = (e2e_ms - ttft_ms) / itl_ms.size().
  nlohmann::json requests = nlohmann::json::array();

  double per_s(double x) const { return span_s > 0 ? x / span_s : 0.0; }
};

LoadLevelFigures summarize_load_level(const endpoint::LoadRun& run, const LoadLevelInputs& in);

}  // namespace atlas::suites
