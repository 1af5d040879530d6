#pragma once
// Decode-anatomy suite: decodes N tokens after a fixed prompt and reports, per generated token,
// wall µs and tokens/s (plain runs, counters off), the per-stage breakdown from the target's
// AnatomySource (separate instrumented runs), and an output fingerprint (FNV-1a 32 of the greedy
// ids) as a counted metric, so a "speedup" that changed the output is visible.
//
// Every measured step is a one-token forward: the prompt is prefilled first (outside the
// window), then the decode request sends prompt + first token with reuse_prefix, so the target
// runs the first token and N - 1 decode steps, N forwards for N tokens.
#include <cstdint>
#include <span>
#include <vector>

#include "records/metric.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

struct DecodeAnatomyConfig {
  int prompt_tokens = 32;   ///< BOS included
  int decode_tokens = 64;   ///< tokens per measured decode (N)
  /// One more counters-off run per mode of this many tokens (clamped to the target's context),
  /// whose inter-token gaps are summarised as p50/p99/max and the largest periodic stall
  /// (latency_series.hpp); 0: no series (the pr gate's configs; nightly runs 1024).
  int series_tokens = 0;
  /// Context depths (prompt tokens) at which each mode's decode tok/s is measured as well, as
  /// llama-bench -d does, with the modes' outputs compared there (graph == eager at depth). A
  /// depth the target's context cannot hold is skipped with a note.
  std::vector<int> depths;
  static DecodeAnatomyConfig from(const SuiteOptions& options);
  nlohmann::json to_json() const;
};

/// FNV-1a 32-bit over the ids' little-endian bytes; exact in a double sample.
std::uint32_t output_fingerprint(std::span<const int> ids);

/// Targets that are not AnatomyProviders get wall figures only (every stage column n/a).
/// details["table"] holds the anatomy table ({title, header, rows, notes}). A source with
/// several decode modes (CUDA: graph replay and eager) is measured in each: the backend's own
/// mode keeps the plain metric names, the others get a "<mode>/" prefix, details["extra_tables"]
/// holds their tables and a side-by-side one, and "decode_graph_captured" (counted, 1/0) says
/// whether the backend's own decode step replays a graph. Per mode also: "itl_p50_us",
/// "itl_p99_us", "itl_max_us", "periodic_stall_us" (timed, from the series run) with
/// details["latency_series"], and per depth D "depth=D/decode_tok_s" (timed) and
/// "depth=D/output_fingerprint" (counted), plus "depth=D/modes_agree" (counted, 1 when every
/// mode decoded the same ids at that depth).
records::SuiteResult run_decode_anatomy_suite(Target& target, const SuiteOptions& options);

}  // namespace atlas::suites
