#pragma once
// The pull-request gate as one call (what `atlas-bench gate` and `--pull-request-gate-check`
// run): run the gate's suites, judge the record against baselines/<machine-class>/<gate>.BASELINE.json
// (counted, accuracy and fingerprints everywhere; stored timed values only on a quiet machine
// class), judge the timed metrics against the merge-base build run interleaved on this box
// (runs/timed_gate.hpp), check that no BASELINE was loosened since the merge-base, print the
// tables, write the record and a markdown summary.
#include <ostream>
#include <string>

#include "runs/judged_run.hpp"
#include "runs/timed_gate.hpp"

namespace atlas::runs {

struct PrGateOptions {
  GateRunOptions common{"pr"};
  std::string summary_md;     ///< "" = no markdown summary; else written atomically to this file
  std::string target_branch;  ///< "" = the gate config's
  TimedGateOptions timed;     ///< base_bin, base_cache_dir, build_jobs (the rest is filled from common)
  bool no_timed = false;      ///< skip the interleaved judgement (timed metrics unjudged)
  bool timed_only = false;    ///< only the interleaved judgement (no in-process suites, no stored baseline)
};

/// Runs the gate and prints its tables to `out` (progress and notes go to stderr). Returns the
/// process exit code (atlas::ExitCode): 0 pass, 1 regression, 2 inconclusive, 3 when no baseline
/// exists (the record is written and the command to create the baseline printed). Throws
/// atlas::Error subclasses for bad input (gate config, baseline, model, suite config).
int run_pr_gate(const PrGateOptions& o, const RunContext& ctx, std::ostream& out);

}  // namespace atlas::runs
