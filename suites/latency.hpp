#pragma once
// Per-request latency figures from a response's timestamps. Definitions (docs/metrics.md) follow
// vLLM `bench serve` and MLPerf LoadGen:
//   TTFT = t(first token) - t(request start)
//   E2E  = t(last token)  - t(request start)
//   TPOT = (E2E - TTFT) / (n - 1)            (defined for n >= 2; AIPerf calls this "ITL")
//   ITL  = every gap t(token i) - t(token i-1), i = 1..n-1 (AIPerf "inter-chunk latency")
// so TPOT is exactly the mean of the request's ITL gaps.
//
// Tokens that arrive together with the first one (over HTTP: in the same socket read; k > 1 of
// them) have no measurable times of their own: the decode figures then start at that read.
// TPOT = (E2E - TTFT) / (n - k), ITL = the n - k gaps after it, decode tok/s = 1 / TPOT; the
// k - 1 tokens are counted (first_read_tokens) and left out, never given zero-length gaps. When
// every token came in the first read (n == k >= 2), there is no TPOT, ITL or rate at all. In
// process every token has its own time, k = 1, and the formulas above are the usual ones.
#include <optional>
#include <vector>

#include "suites/target.hpp"

namespace atlas::suites {

struct RequestLatency {
  int output_tokens = 0;
  int first_read_tokens = 1;            ///< k: tokens stamped with the first token's time
  double ttft_ms = 0;
  double e2e_ms = 0;
  std::optional<double> tpot_ms;        ///< (E2E - TTFT) / (n - k), n > k only
  std::vector<double> itl_ms;           ///< the n - k gaps after the first read, in order
  std::optional<double> decode_tok_s;   ///< (n - k) / (E2E - TTFT), n > k only
};

/// Computes the figures above from `r.t_request_ns` and `r.token_t_ns` (one stamp per token).
/// Throws SuiteError when the response failed, has no tokens, or its stamps go backwards.
RequestLatency compute_latency(const TargetResponse& r);

/// Tokens per second for `tokens` processed in `ms` milliseconds (0 when ms <= 0).
double tokens_per_s(double tokens, double ms);

}  // namespace atlas::suites
