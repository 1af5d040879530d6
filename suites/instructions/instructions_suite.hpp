#pragma once
// Instructions suite: a noise-free CPU cost metric for boxes without hardware performance
// counters (CodSpeed's approach, anchors-harness §12). The engine's prefill and decode run once
// under valgrind's callgrind in a child process (`atlas-bench instruction-probe`, see
// instruction_probe.hpp), one thread, with a simulated cache of fixed geometry; callgrind
// counts guest instructions and simulated cache misses of exactly those regions. The counts do
// not depend on load, clocks or other processes, so the gate compares them nearly exactly.
//
// Metrics (counted, lower is better; per token = region total / tokens in the region):
//   instructions_per_decode_token, instructions_per_prefill_token            ("instructions")
//   d1_misses_per_decode_token, d1_misses_per_prefill_token   first-level data misses, reads+writes
//   ll_misses_per_decode_token, ll_misses_per_prefill_token   last-level data misses, reads+writes
//   output_fingerprint (fnv1a32 of the decode region's ids: both sides ran the same tokens)
//
// Counts are comparable only on the same CPU (glibc picks memcpy/strlen variants by CPUID, and
// valgrind passes most of the host's CPUID through) and the same valgrind version: the suite's
// config records both under "counted_on" so a baseline made elsewhere is refused, not misjudged.
#include <string>

#include <nlohmann/json.hpp>

#include "records/metric.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

struct InstructionsConfig {
  int prompt_tokens = 32;        ///< prefill region: one prompt of this many ids (BOS included)
  int decode_tokens = 16;        ///< decode region: this many one-token forwards
  std::string valgrind = "valgrind";      ///< the valgrind executable (looked up on PATH)
  std::string probe_executable;  ///< "" = this executable (/proc/self/exe), which must be atlas-bench
  static InstructionsConfig from(const SuiteOptions& options);
  nlohmann::json to_json() const;  ///< prompt_tokens, decode_tokens (paths are not part of the identity)
};

/// Fixed cache geometry of the simulation (size,associativity,line bytes): misses then depend on
/// the code, not on the host's caches. Values of a common x86 core (32 KiB 8-way L1s, 8 MiB
/// 16-way last level).
inline constexpr const char* kSimI1 = "32768,8,64";
inline constexpr const char* kSimD1 = "32768,8,64";
inline constexpr const char* kSimLL = "8388608,16,64";

/// What the counts are comparable across: {"cpu_model", "cpu_flags_sha256" (sha256 of the
/// sorted /proc/cpuinfo flags), "valgrind" (its --version), "cache_sim": {I1, D1, LL}}.
nlohmann::json counted_on(const std::string& valgrind_version);

/// Runs the probe under callgrind on the engine `target` wraps (an EngineTarget; anything else
/// throws SuiteError saying why). With a non-CPU backend it returns no metrics and
/// details.skipped saying why (a GPU gate runs the same suite list). Throws SuiteError naming the command
/// when valgrind is missing or the probe fails.
records::SuiteResult run_instructions_suite(Target& target, const SuiteOptions& options);

}  // namespace atlas::suites
