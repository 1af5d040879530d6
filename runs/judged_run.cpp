#include "runs/judged_run.hpp"

#include <filesystem>
#include <iostream>

#include "common/error.hpp"

#include "gates/identity.hpp"
#include "gates/monitor_guard.hpp"

namespace atlas::runs {

JudgedRun run_judged(const GateRunOptions& o, const gates::GateConfig& cfg, const gates::Baseline& baseline,
                     const records::MachineInfo& machine, const RunContext& ctx, bool wait_for_quiet,
                     const std::string& baseline_file) {
  JudgedRun j;
  // A missing model must not cost the settle wait: check the path the runner will open first.
  (void)model_to_open(o.engine.model, ctx.data_dir);
  // Before the engine exists: every GPU compute process seen now is foreign.
  j.quiet = gate_quiet_box(cfg.quiet_box, o.allow_noisy || !wait_for_quiet);
  for (const auto& why : j.quiet.reasons) std::cerr << "quiet-box: " << why << "\n";
  GateSuiteRunner runner(o.engine, ctx.data_dir, cfg.suite_config, cfg.gate, machine);
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
  j.outcome.record.command_line = ctx.command_line;
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

}  // namespace atlas::runs
