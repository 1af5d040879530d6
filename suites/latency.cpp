#include "suites/latency.hpp"

#include <string>

#include "suites/error.hpp"

namespace atlas::suites {

namespace {
double ns_to_ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }
}  // namespace

RequestLatency compute_latency(const TargetResponse& r) {
  if (!r.ok) throw SuiteError("request failed: " + r.error);
  if (r.token_t_ns.empty()) throw SuiteError("response has no token timestamps (no token generated)");
  RequestLatency out;
  out.output_tokens = static_cast<int>(r.token_t_ns.size());
  const std::int64_t first = r.token_t_ns.front();
  const std::int64_t last = r.token_t_ns.back();
  if (first < r.t_request_ns) {
    throw SuiteError("response field token_t_ns[0] = " + std::to_string(first) +
                     " is before t_request_ns = " + std::to_string(r.t_request_ns));
  }
  out.ttft_ms = ns_to_ms(first - r.t_request_ns);
  out.e2e_ms = ns_to_ms(last - r.t_request_ns);
  for (std::size_t i = 1; i < r.token_t_ns.size(); ++i) {
    const std::int64_t gap = r.token_t_ns[i] - r.token_t_ns[i - 1];
    if (gap < 0) {
      throw SuiteError("response field token_t_ns[" + std::to_string(i) + "] goes backwards by " +
                       std::to_string(-gap) + " ns");
    }
  }
  std::size_t k = 1;
  while (k < r.token_t_ns.size() && r.token_t_ns[k] == first) ++k;
  out.first_read_tokens = static_cast<int>(k);
  for (std::size_t i = k; i < r.token_t_ns.size(); ++i) out.itl_ms.push_back(ns_to_ms(r.token_t_ns[i] - r.token_t_ns[i - 1]));
  const int decoded = out.output_tokens - static_cast<int>(k);
  if (decoded >= 1) {
    const double decode_ms = out.e2e_ms - out.ttft_ms;
    out.tpot_ms = decode_ms / decoded;
    out.decode_tok_s = tokens_per_s(decoded, decode_ms);
  }
  return out;
}

double tokens_per_s(double tokens, double ms) { return ms > 0 ? tokens * 1000.0 / ms : 0.0; }

}  // namespace atlas::suites
