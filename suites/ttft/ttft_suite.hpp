#pragma once
// TTFT suite: time to first token over a sweep of prompt lengths, cold (no cached prefix) and
// warm (the same prompt again, prefix reused), plus TPOT/ITL of a short decode after each.
// Metrics (docs/metrics.md): ttft_ms/{cold,warm}/len=N, prefill_tok_s/cold/len=N,
// cached_tokens/warm/len=N, tpot_ms, itl_ms, decode_tok_s.
#include <vector>

#include "records/metric.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

struct TtftConfig {
  std::vector<int> lengths{16, 64, 128, 256, 448};  ///< prompt lengths in tokens (BOS included)
  int decode_tokens = 8;  ///< tokens generated after the first (ignore_eos), for TPOT/ITL
  bool warm = true;       ///< also measure the warm variant

  /// Reads options.config; throws SuiteError naming options.config_source and the field.
  static TtftConfig from(const SuiteOptions& options);
  nlohmann::json to_json() const;
};

/// Runs the suite. Lengths with length + decode_tokens > target.context_length() are skipped
/// and listed in details["skipped_lengths"]. Throws SuiteError when a request fails.
records::SuiteResult run_ttft_suite(Target& target, const SuiteOptions& options);

}  // namespace atlas::suites
