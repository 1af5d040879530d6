// atlas-bench gate (also `atlas-bench --pull-request-gate-check`): run the gate's suites, judge
// the record against baselines/<machine-class>/<gate>.BASELINE.json, check that no BASELINE was
// loosened since the merge-base, print the table, write the record and a markdown summary.
// Exit 0 pass, 1 regression, 2 inconclusive, 3 usage or input error.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/exit_code.hpp"
#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/error.hpp"
#include "gates/gate_run.hpp"
#include "gates/markdown_printer.hpp"
#include "gates/merge_base_check.hpp"
#include "gates/monitor_guard.hpp"
#include "gates/quiet_box.hpp"
#include "gates/text_printer.hpp"
#include "records/provenance.hpp"
#include "records/store.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/atlas-bench/gate_suites.hpp"

namespace {

namespace fs = std::filesystem;
using namespace atlas;
using namespace atlas::gates;

struct Options {
  std::string gate = "pr";
  std::string config;
  cli::EngineChoice engine;
  bool allow_noisy = false;
  std::string baselines_dir = "baselines";
  std::string summary_md;
  std::string target_branch;
  std::string machine_class;
  std::string store = ".benchmarks";
};

int run(const Options& o, const cli::GlobalOptions& global) {
  const GateConfig cfg = load_gate_config(gate_config_path(o.gate, o.config, ATLAS_SOURCE_DIR));
  const records::MachineInfo machine = cli::gate_machine(o.engine.backend, o.machine_class);
  const fs::path baseline_file = baseline_path(o.baselines_dir, machine.machine_class, cfg.gate);
  std::optional<Baseline> baseline;
  if (fs::exists(baseline_file)) baseline = load_baseline(baseline_file);  // a bad file fails before any run

  // Before the engine exists: every GPU compute process seen now is foreign.
  const QuietBoxReport quiet = cli::gate_quiet_box(cfg.quiet_box, o.allow_noisy);
  for (const auto& why : quiet.reasons) std::cerr << "quiet-box: " << why << "\n";

  cli::GateSuiteRunner runner(o.engine, cli::resolve_data_dir(global), cfg.suite_config, cfg.gate, machine);
  MonitorAttemptGuard guard(cfg.quiet_box);
  Baseline judged_against = baseline.value_or(Baseline{});
  GateOutcome outcome = run_gate(
      cfg, judged_against, [&runner](int attempt, const std::vector<std::string>& s) { return runner.run(attempt, s); },
      &guard);

  const MergeBaseReport merge_base =
      check_merge_base(o.baselines_dir, o.target_branch.empty() ? cfg.target_branch : o.target_branch);
  const GateDecision decision = decide(outcome, merge_base.ok(), quiet.quiet, o.allow_noisy);

  records::Record& record = outcome.record;
  record.gate_or_suite = cfg.gate;
  record.quiet_box = {{"before", to_json(quiet)}, {"during", guard.report()}, {"allow_noisy", o.allow_noisy}};
  record.verdicts["comparison_overall"] = record.verdicts.value("overall", "pass");
  record.verdicts["overall"] = baseline ? to_string(decision.overall) : "not judged";
  record.verdicts["reasons"] = decision.reasons;
  record.verdicts["baseline_file"] = baseline_file.string();
  record.verdicts["merge_base"] = to_json(merge_base);
  record.verdicts["gate_config"] = to_json(cfg);
  const fs::path record_file = records::write_to_store(record, o.store);

  if (!baseline) {
    std::cerr << "atlas-bench: no baseline " << baseline_file.string() << " for machine class " << machine.machine_class
              << "; the record was written to " << record_file.string() << "; create the baseline with\n"
              << "  atlas-bench baseline init --gate " << cfg.gate << " --record " << record_file.string() << "\n";
    return to_int(ExitCode::input_error);
  }

  GateReport report;
  report.gate = cfg.gate;
  report.machine_class = machine.machine_class;
  report.baseline_file = baseline_file.string();
  report.commit = record.git.commit;
  report.record_file = record_file.string();
  report.comparison = outcome.comparison;
  report.decision = decision;
  report.merge_base = merge_base;
  report.box_quiet = quiet.quiet;
  report.quiet_box_reasons = quiet.reasons;
  report.attempts = outcome.attempts;
  TextPrinter{}.print(report, std::cout);
  if (!o.summary_md.empty()) {
    std::ostringstream md;
    MarkdownPrinter{}.print(report, md);
    write_file_atomic(o.summary_md, md.str());
  }
  return to_int(exit_code(decision.overall));
}

const cli::RegisterCommand kRegister({
    "gate",
    "Run a gate's suites and judge them against the committed BASELINE (exit 0 pass, 1 regression, 2 inconclusive)",
    [](CLI::App& sub, const cli::GlobalOptions& global) -> std::function<int()> {
      auto o = std::make_shared<Options>();
      // main.cpp rewrites `atlas-bench --data-dir D --pull-request-gate-check` to
      // `atlas-bench gate --data-dir D`: top-level options must still reach the top level.
      sub.fallthrough();
      sub.add_option("--gate", o->gate, "Gate name: gates/config/<gate>.json")->capture_default_str();
      sub.add_option("--config", o->config, "Gate config file (overrides --gate)");
      sub.add_option("--backend", o->engine.backend, "Engine backend")
          ->check(CLI::IsMember({"cpu", "cuda"}))
          ->capture_default_str();
      sub.add_option("--model", o->engine.model, "Model path (default: stories260K from the data directory)");
      sub.add_flag("--allow-noisy", o->allow_noisy, "Judge even when the box is not quiet (the record says so)");
      sub.add_option("--inject-decode-delay-us", o->engine.inject_decode_delay_us,
                     "Test hook: add this many microseconds to every decode step (gate self-test)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--baselines-dir", o->baselines_dir, "Folder of <machine-class>/<gate>.BASELINE.json")
          ->capture_default_str();
      sub.add_option("--summary-md", o->summary_md, "Write a markdown summary (PR comment) to this file");
      sub.add_option("--target-branch", o->target_branch,
                     "Branch for the merge-base check (default: the config's, origin/main falling back to main)");
      sub.add_option("--machine-class", o->machine_class, "Machine class naming the baseline folder (default: detected)");
      sub.add_option("--store", o->store, "Records store")->capture_default_str();
      return [o, &global] { return run(*o, global); };
    },
});

}  // namespace
