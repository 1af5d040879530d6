#include "tools/atlas-bench/gate_command.hpp"

#include <filesystem>
#include <iostream>

#include "common/error.hpp"

#include "gates/identity.hpp"
#include "gates/monitor_guard.hpp"

namespace atlas::cli {

void add_gate_command_options(CLI::App& sub, GateCommandOptions& o) {
  sub.add_option("--gate", o.gate, "Gate name: gates/config/<gate>.json")->capture_default_str();
  sub.add_option("--config", o.config, "Gate config file (overrides --gate)");
  sub.add_option("--backend", o.engine.backend, "Engine backend")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub.add_option("--model", o.engine.model, "Model path (default: stories260K from the data directory)");
  sub.add_flag("--allow-noisy", o.allow_noisy, "Judge even when the box is not quiet (the record says so)");
  sub.add_option("--baselines-dir", o.baselines_dir, "Folder of <machine-class>/<gate>.BASELINE.json")
      ->capture_default_str();
  sub.add_option("--machine-class", o.machine_class, "Machine class naming the baseline folder (default: detected)");
  sub.add_option("--store", o.store, "Records store")->capture_default_str();
}

JudgedRun run_judged(const GateCommandOptions& o, const gates::GateConfig& cfg, const gates::Baseline& baseline,
                     const records::MachineInfo& machine, const GlobalOptions& global, bool wait_for_quiet,
                     const std::string& baseline_file) {
  JudgedRun j;
  // A missing model must not cost the settle wait: check the path the runner will open first.
  (void)model_to_open(o.engine.model, resolve_data_dir(global));
  // Before the engine exists: every GPU compute process seen now is foreign.
  j.quiet = gate_quiet_box(cfg.quiet_box, o.allow_noisy || !wait_for_quiet);
  for (const auto& why : j.quiet.reasons) std::cerr << "quiet-box: " << why << "\n";
  GateSuiteRunner runner(o.engine, resolve_data_dir(global), cfg.suite_config, cfg.gate, machine);
  gates::check_model_identity(baseline, runner.model(), baseline_file);
  gates::MonitorAttemptGuard guard(cfg.quiet_box);
  j.outcome = gates::run_gate(
      cfg, baseline,
      [&](int attempt, const std::vector<std::string>& s) {
        records::Record r = runner.run(attempt, s);
        gates::check_suite_identity(baseline, r, baseline_file);  // like with like, or exit 3
        return r;
      },
      &guard);
  j.during = guard.report();
  j.outcome.record.gate_or_suite = cfg.gate;
  j.outcome.record.command_line = global.argv;
  j.outcome.record.quiet_box = {{"before", gates::to_json(j.quiet)}, {"during", j.during}, {"allow_noisy", o.allow_noisy}};
  return j;
}

gates::GateReport gate_report(const std::string& title, const records::MachineInfo& machine,
                              const std::filesystem::path& baseline_file, const std::filesystem::path& record_file,
                              const JudgedRun& run, const gates::GateDecision& decision) {
  gates::GateReport r;
  r.gate = title;
  r.machine_class = machine.machine_class;
  r.baseline_file = baseline_file.string();
  r.commit = run.outcome.record.git.commit;
  r.record_file = record_file.string();
  r.comparison = run.outcome.comparison;
  r.decision = decision;
  r.box_quiet = run.quiet.quiet;
  r.quiet_box_reasons = run.quiet.reasons;
  r.attempts = run.outcome.attempts;
  return r;
}

}  // namespace atlas::cli
