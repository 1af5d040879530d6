#pragma once
// Per-request latency figures from a response's timestamps. Definitions (docs/metrics.md) follow
// vLLM `bench serve` and MLPerf LoadGen:
//   TTFT = t(first token) - t(request start)
//   E2E  = t(last token)  - t(request start)
//   TPOT = (E2E - TTFT) / (n - 1)            (defined for n >= 2; AIPerf calls this "ITL")
//   ITL  = every gap t(token i) - t(token i-1), i = 1..n-1 (AIPerf "inter-chunk latency")
// so TPOT is exactly the mean of the request's ITL gaps.
#include <optional>
#include <vector>

#include "suites/target.hpp"

namespace atlas::suites {

struct RequestLatency {
  int output_tokens = 0;
  double ttft_ms = 0;
  double e2e_ms = 0;
  std::optional<double> tpot_ms;        ///< n >= 2 only
  std::vector<double> itl_ms;           ///< n - 1 gaps, in order
  std::optional<double> decode_tok_s;   ///< (n - 1) / (E2E - TTFT), n >= 2 and E2E > TTFT
};

/// Computes the figures above from `r.t_request_ns` and `r.token_t_ns` (one stamp per token).
/// Throws SuiteError when the response failed, has no tokens, or its stamps go backwards.
RequestLatency compute_latency(const TargetResponse& r);

/// Tokens per second for `tokens` processed in `ms` milliseconds (0 when ms <= 0).
double tokens_per_s(double tokens, double ms);

}  // namespace atlas::suites
