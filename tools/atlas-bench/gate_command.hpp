#pragma once
// What `atlas-bench gate` and `atlas-bench nightly` share: their common flags, the judged run
// (quiet-box step before, the box monitor during, reruns until decided) and the report the
// printers take. Each command keeps only what is its own: the merge-base check and markdown
// summary (gate), the shard slice (nightly).
#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <utility>

#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/gate_run.hpp"
#include "gates/quiet_box.hpp"
#include "gates/report.hpp"
#include "records/record.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/atlas-bench/gate_suites.hpp"

namespace atlas::cli {

/// The flags both gate commands take, with the same defaults.
struct GateCommandOptions {
  explicit GateCommandOptions(std::string default_gate) : gate(std::move(default_gate)) {}
  std::string gate;                     ///< gates/config/<gate>.json
  std::string config;                   ///< a gate config file (overrides gate)
  EngineChoice engine;
  bool allow_noisy = false;
  std::string baselines_dir = "baselines";
  std::string machine_class;            ///< "" = detected
  std::string store = ".benchmarks";
};

/// Registers --gate, --config, --backend, --model, --allow-noisy, --baselines-dir,
/// --machine-class and --store on `sub`.
void add_gate_command_options(CLI::App& sub, GateCommandOptions& o);

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
JudgedRun run_judged(const GateCommandOptions& o, const gates::GateConfig& cfg, const gates::Baseline& baseline,
                     const records::MachineInfo& machine, const GlobalOptions& global, bool wait_for_quiet = true,
                     const std::string& baseline_file = "");

/// The report the text and markdown printers take (merge_base left empty).
gates::GateReport gate_report(const std::string& title, const records::MachineInfo& machine,
                              const std::filesystem::path& baseline_file, const std::filesystem::path& record_file,
                              const JudgedRun& run, const gates::GateDecision& decision);

}  // namespace atlas::cli
