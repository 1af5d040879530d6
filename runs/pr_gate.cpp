#include "runs/pr_gate.hpp"

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/build_paths.hpp"
#include "common/exit_code.hpp"
#include "common/machine_error.hpp"
#include "gates/baseline.hpp"
#include "gates/counted_vs_base.hpp"
#include "gates/config.hpp"
#include "gates/error.hpp"
#include "gates/identity.hpp"
#include "gates/merge_base_check.hpp"
#include "gates/printers/gate_printer.hpp"
#include "gates/unstored_timed.hpp"
#include "records/provenance.hpp"
#include "records/store.hpp"
#include "runs/counted_base.hpp"
#include "runs/judge_inputs.hpp"

namespace atlas::runs {
namespace {

namespace fs = std::filesystem;
using namespace atlas::gates;

Overall worst(Overall a, Overall b) {
  auto rank = [](Overall o) { return o == Overall::regression ? 2 : o == Overall::inconclusive ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

}  // namespace

int run_pr_gate(const PrGateOptions& o, const RunContext& ctx, std::ostream& out) {
  const GateRunOptions& c = o.common;
  // The judge's inputs come from the merge-base (runs/judge_inputs.hpp): the target from the
  // command line or CI, the gate and suite configs as committed there.
  const JudgeInputs inputs = judge_inputs(o.target_branch, c.gate, c.config, c.baselines_dir, !o.timed_only, !o.no_timed);
  const GateConfig& cfg = inputs.config;
  const records::MachineInfo machine = gate_machine(c.engine.backend, c.machine_class);
  const fs::path baseline_file = baseline_path(c.baselines_dir, machine.machine_class, cfg.gate);
  // A prebuilt base binary must be the merge-base's build, checked before any suite runs: the
  // PR's own binary given as --base-bin (GATE_ARGS in the PR's Makefile) made the judgements
  // against the merge-base A/A runs.
  std::optional<GivenBase> given_base;
  if (!o.timed.base_bin.empty()) {
    given_base = identify_given_base(o.timed.base_bin);
    require_merge_base_build(*given_base, inputs.merge_base.found() ? inputs.merge_base.commit : std::string(),
                             inputs.merge_base.target);
  }
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
  // Counted CPU cost is judged where it is comparable: the merge-base counted on this CPU in this
  // job (below). The stored counts are a record, compared only where this CPU made them.
  const bool counted_here = !o.timed_only && c.engine.backend == "cpu" &&
                            std::find(cfg.suites.begin(), cfg.suites.end(), kCountedSuite) != cfg.suites.end();
  if (counted_here) judged_baseline = without_suite(judged_baseline);

  JudgedRun judged;
  if (!o.timed_only) {
    judged = run_judged(c, cfg, judged_baseline, machine, ctx, /*wait_for_quiet=*/stored_timed,
                             baseline_file.string());
  } else {
    judged.outcome.record.gate_or_suite = cfg.gate;
    judged.outcome.record.machine = machine;
    judged.outcome.record.git = records::collect_git(fs::current_path());
    judged.outcome.record.build = records::build_info();
    judged.outcome.record.start_utc = records::utc_now_iso();
    judged.outcome.record.run_id = records::new_run_id();
  }
  const JudgedBaseline judged_file{baseline_file, baseline_path("baselines", machine.machine_class, cfg.gate).generic_string()};
  const MergeBaseReport merge_base = check_merge_base(inputs.merge_base, c.baselines_dir, &judged_file);
  // The merge-base binary, found or built once for both judgements against it.
  const bool timed_here = cfg.timed.enabled && !o.no_timed;
  BaseBinary base;
  if (counted_here || timed_here) {
    base = resolve_base_binary({o.timed.base_bin, given_base ? given_base_text(*given_base) : std::string(),
                                o.timed.base_cache_dir, o.timed.build_jobs},
                               merge_base);
    if (!base.build_line.empty()) std::cerr << base.build_line << "\n";
  }
  std::vector<std::string> counted_notes;
  CountedBaseReport counted;
  if (counted_here) {
    counted = judge_counted_vs_base(cfg, judged.outcome.record, base, ctx.data_dir, c.engine.model);
    counted_notes = merge_counted_verdicts(judged.outcome, counted, baseline ? &*baseline : nullptr, cfg);
  }
  // Without stored timed values the box's quietness cannot change an exact verdict.
  GateDecision decision = decide(judged.outcome, merge_base.ok(), stored_timed ? judged.quiet.quiet : true, c.allow_noisy);
  if (o.timed_only) decision = GateDecision{merge_base.ok() ? Overall::pass : Overall::regression, {}};
  // Fail closed: a pass needs a judge the target branch reviewed. Outside git there is nothing
  // to compare with (a note says so); in a checkout whose merge-base is missing (a shallow
  // clone) or with inputs not committed at the merge-base, nothing reviewed the judge.
  for (const auto& why : unreviewed_judge(inputs, merge_base, baseline.has_value() && !o.timed_only)) {
    decision.reasons.push_back(why);
    if (decision.overall == Overall::pass) decision.overall = Overall::inconclusive;
  }
  // Stored values are judged like with like only where the BASELINE pins the suite config they
  // were measured with (gates/identity.hpp); the judge runs the merge-base's.
  if (baseline && !o.timed_only) {
    for (const auto& suite : unpinned_suites(judged_baseline)) {
      decision.reasons.push_back("the BASELINE " + baseline_file.string() + " does not pin the config of suite " + suite +
                                 " (identity.suites." + suite + "), so nothing shows its stored values were measured with "
                                 "the config judged now: the result cannot pass; `atlas-bench baseline ratchet --record "
                                 "<this run's record>` pins it");
      if (decision.overall == Overall::pass) decision.overall = Overall::inconclusive;
    }
  }

  TimedReport timed;
  if (cfg.timed.enabled && !o.no_timed) {
    TimedGateOptions topts = o.timed;
    topts.model = c.engine.model;
    topts.backend = c.engine.backend;
    topts.data_dir = ctx.data_dir;
    topts.inject_decode_delay_us = c.engine.inject_decode_delay_us;
    timed = run_timed_gate(cfg, topts, base, /*skip_aa=*/!o.timed_only);
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
  // The README's table says a busy box is inconclusive; the timed judgement against the
  // merge-base is the exception (it measures each round's load), and a reader who saw the
  // pre-run check's "not quiet" must be told why a timed verdict stands anyway.
  if (timed.ran && !o.timed_only && !judged.quiet.quiet && timed_answer != Overall::inconclusive) {
    decision.reasons.push_back(
        "the pre-run check said the box was not quiet; the timed verdict stands because it is judged on interleaved "
        "rounds, " + std::to_string(timed.outcome.disturbed_rounds) + " of " + std::to_string(timed.outcome.rounds.size()) +
        " disturbed by load (at most " + std::to_string(static_cast<int>(cfg.timed.max_disturbed_share * 100 + 0.5)) +
        " % allowed)");
  }
  // --machine-class picks the BASELINE judged: a class other than this box's is said beside the
  // verdict (and kept in the record's machine.detected_machine_class), never silently.
  if (!machine.detected_machine_class.empty())
    decision.reasons.push_back("machine class " + machine.machine_class + " given by --machine-class; this box is " +
                               machine.detected_machine_class + " (the class picks the BASELINE: " + baseline_file.string() +
                               ")");
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
  if (given_base)
    record.verdicts["base_binary"] = {{"given", given_base->path},
                                      {"version", given_base->version_output},
                                      {"built_from", given_base->reported ? given_base->reported->commit : std::string()},
                                      {"dirty", given_base->reported && given_base->reported->dirty},
                                      {"checked_against", given_base->checked_against}};
  if (counted_here) record.verdicts["counted_vs_merge_base"] = to_json(counted);
  record.verdicts["gate_config"] = to_json(cfg);
  // Where the judge's inputs came from: the merge-base's copies, or files as given.
  nlohmann::json judge_files = nlohmann::json::array();
  for (const auto& f : inputs.files) judge_files.push_back({{"source", f.source}, {"reviewed", f.reviewed}});
  record.verdicts["judge"] = {{"target", inputs.merge_base.target},
                              {"target_source", inputs.merge_base.target_source},
                              {"files", judge_files}};
  // The record is written after the judgement and its failure must not hide the verdict: it is
  // printed either way, and the failed write sets the exit after the table (the run's evidence is
  // lost): 4 when the machine failed (a full disk: MachineError), 3 when the store path is wrong.
  fs::path record_file;
  std::string record_error;
  bool machine_failed = false;
  try {
    record_file = records::write_to_store(record, c.store);
  } catch (const std::exception& e) {
    machine_failed = dynamic_cast<const MachineError*>(&e) != nullptr;
    record_error = e.what();
    record_file = "(not written: " + record_error + ")";
  }

  if (!judged_anything && record_error.empty()) {
    std::cerr << "atlas-bench: no baseline " << baseline_file.string() << " for machine class " << machine.machine_class
              << "; the record was written to " << record_file.string() << "; create the baseline with\n"
              << "  atlas-bench baseline init --gate " << cfg.gate << " --record " << record_file.string() << "\n";
    return to_int(ExitCode::input_error);
  }

  GateReport report = gate_report(cfg.gate, machine, baseline_file, record_file, judged, decision);
  report.merge_base = merge_base;
  report.timed = timed;
  if (o.timed_only) report.notes.push_back("stored baseline: not judged (--timed-only)");
  for (const auto& n : inputs.notes) report.notes.push_back(n);
  for (const auto& n : counted_notes) report.notes.push_back(n);
  if (hidden_timed > 0)
    report.notes.push_back("stored baseline: " + std::to_string(hidden_timed) + " timed values not gated on " +
                           machine.machine_class + " (not a quiet machine class in the gate config); timed metrics "
                           "are judged against the merge-base above");
  make_text_printer()->print(report, out);
  if (!o.summary_md.empty()) {
    std::ostringstream md;
    make_markdown_printer()->print(report, md);
    try {
      write_file_atomic(o.summary_md, md.str());
    } catch (const std::exception& e) {
      machine_failed = machine_failed || dynamic_cast<const MachineError*>(&e) != nullptr;
      record_error += (record_error.empty() ? "" : "; ") + std::string("the summary ") + o.summary_md + ": " + e.what();
    }
  }
  if (!record_error.empty()) {
    const ExitCode code = machine_failed ? ExitCode::machine_error : ExitCode::input_error;
    out << "result above: " << to_string(decision.overall) << ", but not recorded: " << record_error << " (exit "
        << to_int(code) << ")\n";
    return to_int(code);
  }
  if (!judged_anything) return to_int(ExitCode::input_error);
  return to_int(exit_code(decision.overall));
}

}  // namespace atlas::runs
