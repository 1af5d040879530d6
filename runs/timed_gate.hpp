#pragma once
// The run side of the gate's timed judgement: finds the base binary (--base-bin, or the
// merge-base built and cached by gates::build_base), and runs each side as
// `<binary> --data-dir D run --suite S --config <the head's suite config file> --model M
//  --backend B --threads N --out-dir <tmp>` — the same kind of subprocess on both sides, the
// planted delay (--inject-decode-delay-us) on the head side only — while gates::run_interleaved
// alternates them and judges.
#include <string>

#include "gates/config.hpp"
#include "runs/base_binary.hpp"
#include "gates/timed_report.hpp"

namespace atlas::runs {

struct TimedGateOptions {
  std::string base_bin;              ///< --base-bin: a prebuilt base binary (CI artifact); skips the build
  std::string base_cache_dir;        ///< --base-cache-dir ("" = gates::default_base_cache_dir)
  std::string model;                 ///< the model both sides open
  std::string backend = "cpu";
  std::string data_dir;
  double inject_decode_delay_us = 0; ///< head side only
  int build_jobs = 0;
};

/// Runs the timed judgement of `cfg.timed` (which must be enabled) against `base`
/// (resolve_base_binary); a base without a binary makes the report "not judged" with
/// skipped_is_failure set. `skip_aa`: when the base is this very binary (the merge-base is HEAD
/// with no tracked change) and no delay is planted, nothing changed to time: not judged, not a
/// failure (gate-proof's --timed-only runs the A/A on purpose and passes false). Prints progress
/// to stderr.
gates::TimedReport run_timed_gate(const gates::GateConfig& cfg, const TimedGateOptions& o, const BaseBinary& base,
                                  bool skip_aa = false);

}  // namespace atlas::runs
