// atlas-bench gate (also `atlas-bench --pull-request-gate-check`): run the gate's suites, judge
// the record against baselines/<machine-class>/<gate>.BASELINE.json (counted, accuracy and
// fingerprints everywhere; stored timed values only on a quiet machine class), judge the timed
// metrics against the merge-base build run interleaved on this box (timed_gate.hpp), check
// that no BASELINE was loosened since the merge-base, print the tables, write the record and a
// markdown summary. Exit 0 pass, 1 regression, 2 inconclusive, 3 usage or input error.
#include "common/build_paths.hpp"
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
#include "gates/unstored_timed.hpp"
#include "records/provenance.hpp"
#include "records/store.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/atlas-bench/gate_command.hpp"
#include "tools/atlas-bench/timed_gate.hpp"

namespace {

namespace fs = std::filesystem;
using namespace atlas;
using namespace atlas::gates;

struct Options {
  cli::GateCommandOptions common{"pr"};
  std::string summary_md;
  std::string target_branch;
  cli::TimedGateOptions timed;
  bool no_timed = false;    ///< skip the interleaved judgement (timed metrics unjudged)
  bool timed_only = false;  ///< only the interleaved judgement (no in-process suites, no stored baseline)
};

Overall worst(Overall a, Overall b) {
  auto rank = [](Overall o) { return o == Overall::regression ? 2 : o == Overall::inconclusive ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

int run(const Options& o, const cli::GlobalOptions& global) {
  const cli::GateCommandOptions& c = o.common;
  const GateConfig cfg = load_gate_config(gate_config_path(c.gate, c.config, ATLAS_SOURCE_DIR));
  const records::MachineInfo machine = cli::gate_machine(c.engine.backend, c.machine_class);
  const fs::path baseline_file = baseline_path(c.baselines_dir, machine.machine_class, cfg.gate);
  std::optional<Baseline> baseline;
  if (fs::exists(baseline_file)) baseline = load_baseline(baseline_file);  // a bad file fails before any run
  if (o.timed_only && !cfg.timed.enabled)
    throw GateError(cfg.gate + " gate config has no \"timed\" section, so --timed-only has nothing to run");
  if (!baseline && !o.timed_only) {
    // Said at the start, before the suites run for minutes, not only at the end.
    std::cerr << "atlas-bench: no baseline " << baseline_file.string() << " for machine class " << machine.machine_class;
    if (!records::git_rev_parse(fs::current_path(), "HEAD")) {
      std::cerr << " (" << fs::current_path().string()
                << " is not inside a git checkout; --baselines-dir is read relative to the working directory)";
    }
    std::cerr << ": the suites run and the record is written, but nothing is judged\n";
  }

  // Stored timed values mean something only on a dedicated quiet machine class; elsewhere timed
  // metrics are judged against the merge-base, interleaved on this box.
  const bool stored_timed = timed_baselines_gated(cfg, machine.machine_class);
  Baseline judged_baseline = baseline.value_or(Baseline{});
  std::size_t hidden_timed = 0;
  if (!stored_timed)
    hidden_timed = std::erase_if(judged_baseline.metrics,
                                 [](const auto& kv) { return kv.second.kind == records::MetricKind::timed; });

  cli::JudgedRun judged;
  if (!o.timed_only) {
    judged = cli::run_judged(c, cfg, judged_baseline, machine, global, /*wait_for_quiet=*/stored_timed,
                             baseline_file.string());
  } else {
    judged.outcome.record.gate_or_suite = cfg.gate;
    judged.outcome.record.machine = machine;
    judged.outcome.record.git = records::collect_git(fs::current_path());
    judged.outcome.record.build = records::build_info();
    judged.outcome.record.start_utc = records::utc_now_iso();
    judged.outcome.record.run_id = records::new_run_id();
  }
  const MergeBaseReport merge_base =
      check_merge_base(c.baselines_dir, o.target_branch.empty() ? cfg.target_branch : o.target_branch);
  // Without stored timed values the box's quietness cannot change an exact verdict.
  GateDecision decision = decide(judged.outcome, merge_base.ok(), stored_timed ? judged.quiet.quiet : true, c.allow_noisy);
  if (o.timed_only) decision = GateDecision{merge_base.ok() ? Overall::pass : Overall::regression, {}};

  TimedReport timed;
  if (cfg.timed.enabled && !o.no_timed) {
    cli::TimedGateOptions topts = o.timed;
    topts.model = c.engine.model;
    topts.backend = c.engine.backend;
    topts.data_dir = cli::resolve_data_dir(global);
    topts.inject_decode_delay_us = c.engine.inject_decode_delay_us;
    timed = cli::run_timed_gate(cfg, topts, merge_base);
  } else {
    timed.skipped_reason = cfg.timed.enabled ? "--no-timed" : "the gate config has no \"timed\" section";
  }
  explain_unstored_timed(judged.outcome.comparison, cfg, machine.machine_class, timed.ran ? "" : timed.skipped_reason);
  if (judged.outcome.record.verdicts.is_object() && judged.outcome.record.verdicts.contains("verdicts"))
    judged.outcome.record.verdicts["verdicts"] = to_json(judged.outcome.comparison)["verdicts"];
  const Overall timed_answer = timed_overall(timed);
  if (timed_answer != Overall::pass) {
    std::string why = "timed: ";
    if (!timed.ran) {
      why += timed.skipped_reason;
    } else {
      for (const auto& v : timed.outcome.verdicts) {
        if (v.status == TimedStatus::pass) continue;
        why += (why.size() > 7 ? ", " : "") + v.metric.key + " " + to_string(v.status);
      }
      if (!timed.outcome.failure.empty()) why += (why.size() > 7 ? "; " : "") + timed.outcome.failure;
    }
    decision.reasons.push_back(why);
  }
  const bool judged_anything = baseline.has_value() || o.timed_only;
  decision.overall = worst(decision.overall, timed_answer);

  records::Record& record = judged.outcome.record;
  if (!record.verdicts.is_object()) record.verdicts = nlohmann::json::object();
  record.verdicts["comparison_overall"] = record.verdicts.value("overall", "pass");
  record.verdicts["overall"] = judged_anything ? to_string(decision.overall) : "not judged";
  record.verdicts["reasons"] = decision.reasons;
  record.verdicts["timed"] = to_json(timed);
  record.verdicts["stored_timed_gated"] = stored_timed;
  record.verdicts["baseline_file"] = baseline_file.string();
  record.verdicts["merge_base"] = to_json(merge_base);
  record.verdicts["gate_config"] = to_json(cfg);
  const fs::path record_file = records::write_to_store(record, c.store);

  if (!judged_anything) {
    std::cerr << "atlas-bench: no baseline " << baseline_file.string() << " for machine class " << machine.machine_class
              << "; the record was written to " << record_file.string() << "; create the baseline with\n"
              << "  atlas-bench baseline init --gate " << cfg.gate << " --record " << record_file.string() << "\n";
    return to_int(ExitCode::input_error);
  }

  GateReport report = cli::gate_report(cfg.gate, machine, baseline_file, record_file, judged, decision);
  report.merge_base = merge_base;
  report.timed = timed;
  if (o.timed_only) report.notes.push_back("stored baseline: not judged (--timed-only)");
  if (hidden_timed > 0)
    report.notes.push_back("stored baseline: " + std::to_string(hidden_timed) + " timed values not gated on " +
                           machine.machine_class + " (not a quiet machine class in the gate config); timed metrics "
                           "are judged against the merge-base above");
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
                     "Test hook: sleep this many microseconds (fractions allowed) per decode step on the head side "
                     "only (gate self-test)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--base-bin", o->timed.base_bin,
                     "Base side of the timed judgement: this atlas-bench binary (e.g. a CI artifact built on the "
                     "target branch) instead of building the merge-base");
      sub.add_option("--base-cache-dir", o->timed.base_cache_dir,
                     "Where merge-base builds are kept (default: $ATLAS_GATE_CACHE, else <build dir>/gate-base)");
      sub.add_option("--build-jobs", o->timed.build_jobs, "Parallel jobs for the merge-base build (default: cores)")
          ->check(CLI::NonNegativeNumber);
      sub.add_flag("--no-timed", o->no_timed, "Skip the timed judgement against the merge-base (timed metrics unjudged)");
      sub.add_flag("--timed-only", o->timed_only,
                   "Only the timed judgement against the merge-base (no in-process suites, no stored baseline)");
      sub.add_option("--inject-decode-work", o->common.engine.inject_decode_work,
                     "Test hook: run this many extra loop iterations per decoded token (the instruction count "
                     "must catch it)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--summary-md", o->summary_md, "Write a markdown summary (PR comment) to this file");
      sub.add_option("--target-branch", o->target_branch,
                     "Branch for the merge-base check (default: the config's, origin/main falling back to main)");
      return [o, &global] { return run(*o, global); };
    },
});

}  // namespace
