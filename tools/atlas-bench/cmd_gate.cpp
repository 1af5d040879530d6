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
#include "gates/markdown_printer.hpp"
#include "gates/merge_base_check.hpp"
#include "gates/text_printer.hpp"
#include "records/provenance.hpp"
#include "records/store.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/atlas-bench/gate_command.hpp"

namespace {

namespace fs = std::filesystem;
using namespace atlas;
using namespace atlas::gates;

struct Options {
  cli::GateCommandOptions common{"pr"};
  std::string summary_md;
  std::string target_branch;
};

int run(const Options& o, const cli::GlobalOptions& global) {
  const cli::GateCommandOptions& c = o.common;
  const GateConfig cfg = load_gate_config(gate_config_path(c.gate, c.config, ATLAS_SOURCE_DIR));
  const records::MachineInfo machine = cli::gate_machine(c.engine.backend, c.machine_class);
  const fs::path baseline_file = baseline_path(c.baselines_dir, machine.machine_class, cfg.gate);
  std::optional<Baseline> baseline;
  if (fs::exists(baseline_file)) baseline = load_baseline(baseline_file);  // a bad file fails before any run
  if (!baseline) {
    // Said at the start, before the suites run for minutes, not only at the end.
    std::cerr << "atlas-bench: no baseline " << baseline_file.string() << " for machine class " << machine.machine_class;
    if (!records::git_rev_parse(fs::current_path(), "HEAD")) {
      std::cerr << " (" << fs::current_path().string()
                << " is not inside a git checkout; --baselines-dir is read relative to the working directory)";
    }
    std::cerr << ": the suites run and the record is written, but nothing is judged\n";
  }

  cli::JudgedRun judged = cli::run_judged(c, cfg, baseline.value_or(Baseline{}), machine, global);
  const MergeBaseReport merge_base =
      check_merge_base(c.baselines_dir, o.target_branch.empty() ? cfg.target_branch : o.target_branch);
  const GateDecision decision = decide(judged.outcome, merge_base.ok(), judged.quiet.quiet, c.allow_noisy);

  records::Record& record = judged.outcome.record;
  record.verdicts["comparison_overall"] = record.verdicts.value("overall", "pass");
  record.verdicts["overall"] = baseline ? to_string(decision.overall) : "not judged";
  record.verdicts["reasons"] = decision.reasons;
  record.verdicts["baseline_file"] = baseline_file.string();
  record.verdicts["merge_base"] = to_json(merge_base);
  record.verdicts["gate_config"] = to_json(cfg);
  const fs::path record_file = records::write_to_store(record, c.store);

  if (!baseline) {
    std::cerr << "atlas-bench: no baseline " << baseline_file.string() << " for machine class " << machine.machine_class
              << "; the record was written to " << record_file.string() << "; create the baseline with\n"
              << "  atlas-bench baseline init --gate " << cfg.gate << " --record " << record_file.string() << "\n";
    return to_int(ExitCode::input_error);
  }

  GateReport report = cli::gate_report(cfg.gate, machine, baseline_file, record_file, judged, decision);
  report.merge_base = merge_base;
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
      cli::add_gate_command_options(sub, o->common);
      sub.add_option("--inject-decode-delay-us", o->common.engine.inject_decode_delay_us,
                     "Test hook: add this many microseconds to every decode step (gate self-test)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--summary-md", o->summary_md, "Write a markdown summary (PR comment) to this file");
      sub.add_option("--target-branch", o->target_branch,
                     "Branch for the merge-base check (default: the config's, origin/main falling back to main)");
      return [o, &global] { return run(*o, global); };
    },
});

}  // namespace
