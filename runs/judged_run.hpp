#pragma once
// What the pull-request gate and a nightly shard share: their common options, the judged run
// (quiet-box step before, the box monitor during, reruns until decided) and the report the
// printers take. Each run keeps only what is its own: the merge-base check and markdown summary
// (runs/pr_gate.hpp), the shard slice (runs/nightly_shard.hpp).
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/gate_run.hpp"
#include "gates/quiet_box.hpp"
#include "gates/report.hpp"
#include "records/record.hpp"
#include "runs/gate_suites.hpp"

namespace atlas::runs {

/// Where a gate run reads its inputs: the data directory (already resolved) and the command line
/// the record keeps.
struct RunContext {
  std::string data_dir;                   ///< models/ and bfcl/, resolved by the caller
  std::vector<std::string> command_line;  ///< argv as typed (record.command_line)
};

/// The options both gate runs take, with the same defaults (the CLI's flags:
/// tools/atlas-bench/gate_options.hpp).
struct GateRunOptions {
  explicit GateRunOptions(std::string default_gate) : gate(std::move(default_gate)) {}
  std::string gate;                     ///< gates/config/<gate>.json
  std::string config;                   ///< a gate config file (overrides gate)
  EngineChoice engine;
  bool allow_noisy = false;
  std::string baselines_dir = "baselines";
  std::string machine_class;            ///< "" = detected
  std::string store = ".benchmarks";
};

/// A judged run: the box before and during, and the outcome against the baseline given.
struct JudgedRun {
  gates::QuietBoxReport quiet;  ///< before the run (after the settle wait unless allow_noisy)
  nlohmann::json during;        ///< the monitor's windows, one per attempt
  gates::GateOutcome outcome;
};

/// Runs `cfg.suites` on the engine `o` names, judged against `baseline` (empty: nothing judged),
/// and stamps record.gate_or_suite, record.quiet_box and record.command_line. `wait_for_quiet`
/// false probes the box once instead of waiting for it to settle (nothing judged depends on it:
/// no stored timed values on this machine class). Throws engine, suites and gates errors;
/// GateError before any suite runs when the model differs from the baseline's
/// (gates/identity.hpp), after each attempt when a suite config does.
JudgedRun run_judged(const GateRunOptions& o, const gates::GateConfig& cfg, const gates::Baseline& baseline,
                     const records::MachineInfo& machine, const RunContext& ctx, bool wait_for_quiet = true,
                     const std::string& baseline_file = "");

/// The report the text and markdown printers take (merge_base left empty).
gates::GateReport gate_report(const std::string& title, const records::MachineInfo& machine,
                              const std::filesystem::path& baseline_file, const std::filesystem::path& record_file,
                              const JudgedRun& run, const gates::GateDecision& decision);

}  // namespace atlas::runs
