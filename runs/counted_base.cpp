#include "runs/counted_base.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "common/process.hpp"
#include "common/temp_dir.hpp"
#include "gates/counted_vs_base.hpp"
#include "records/record_io.hpp"
#include "runs/side_run.hpp"
#include "suites/resources.hpp"

namespace atlas::runs {

CountedBaseReport judge_counted_vs_base(const gates::GateConfig& cfg, const records::Record& head, const BaseBinary& base,
                                        const std::string& data_dir, const std::string& model) {
  CountedBaseReport r;
  r.base_commit = base.commit;
  if (!head.suites.count(gates::kCountedSuite)) {
    r.skipped_reason = "the head ran no " + std::string(gates::kCountedSuite) + " suite";
    return r;
  }
  if (base.path.empty()) {
    r.skipped_reason = base.error;
    r.skipped_is_failure = !base.commit.empty();  // a merge-base existed but did not build
    return r;
  }
  const TempDir dir("atlas-gate-counted-");
  const std::string suite_config = std::filesystem::absolute(suites::resolve_resource(cfg.suite_config, "config")).string();
  const auto argv = side_argv(base.path, data_dir, gates::kCountedSuite, suite_config, "cpu", model, dir.path() / "store");
  std::cerr << "gate: counting the merge-base" << (base.same_as_head ? " (this binary: an A/A run)" : "") << " under callgrind\n";
  const auto t0 = std::chrono::steady_clock::now();
  const ProcessResult p = run_process(argv, {});
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (p.exit_status != 0) {
    r.skipped_reason = "the merge-base's instructions run exited " + std::to_string(p.exit_status) + ": " + last_lines(p.err);
    r.skipped_is_failure = true;
    return r;
  }
  records::Record base_record;
  try {
    const std::string path = record_path_from(p.out);
    if (path.empty()) throw std::runtime_error("it printed no 'record: <path>' line");
    base_record = records::read_record(path);
  } catch (const std::exception& e) {
    r.skipped_reason = std::string("reading the merge-base's instructions record failed: ") + e.what();
    r.skipped_is_failure = true;
    return r;
  }
  r.comparison = gates::compare_counted_with_base(head, base_record, cfg, base.commit.empty() ? "--base-bin" : base.commit);
  r.ran = true;
  return r;
}

namespace {

gates::Overall worst(gates::Overall a, gates::Overall b) {
  auto rank = [](gates::Overall o) { return o == gates::Overall::regression ? 2 : o == gates::Overall::inconclusive ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

records::Record only_counted(const records::Record& r) {
  records::Record out = r;
  out.suites.clear();
  if (const auto it = r.suites.find(gates::kCountedSuite); it != r.suites.end()) out.suites.emplace(it->first, it->second);
  return out;
}

gates::Baseline only_counted(const gates::Baseline& b) {
  gates::Baseline out = b;
  const std::string prefix = std::string(gates::kCountedSuite) + "/";
  std::erase_if(out.metrics, [&](const auto& kv) { return kv.first.rfind(prefix, 0) != 0; });
  return out;
}

std::string stored_cpu(const gates::Baseline& b) {
  if (!b.identity.is_object() || !b.identity.contains("suites") || !b.identity["suites"].contains(gates::kCountedSuite)) return "an unknown CPU";
  return gates::counted_on_text(b.identity["suites"][gates::kCountedSuite]);
}

}  // namespace

std::vector<std::string> merge_counted_verdicts(gates::GateOutcome& outcome, const CountedBaseReport& counted,
                                                const gates::Baseline* stored, const gates::GateConfig& cfg) {
  const std::string prefix = std::string(gates::kCountedSuite) + "/";
  auto& rows = outcome.comparison.verdicts;
  std::erase_if(rows, [&](const gates::Verdict& v) { return v.key.rfind(prefix, 0) == 0; });
  std::vector<std::string> notes;
  const records::Record head = only_counted(outcome.record);
  const auto head_suite = outcome.record.suites.find(gates::kCountedSuite);
  const std::string here = head_suite == outcome.record.suites.end() ? "this CPU" : gates::counted_on_text(head_suite->second.config);
  const bool has_stored = stored != nullptr && !only_counted(*stored).metrics.empty();
  const bool stored_here = has_stored && gates::stored_counts_match(*stored, outcome.record);
  gates::Comparison judged;
  if (counted.ran) {
    judged = counted.comparison;
    notes.push_back("counted: " + std::string(gates::kCountedSuite) + " judged against the merge-base " + counted.base_commit.substr(0, 12) +
                    ", counted on this CPU in this job (" + here + ")");
  } else if (stored_here) {
    judged = gates::compare(only_counted(*stored), head, gates::compare_settings(cfg));
    notes.push_back("counted: the merge-base was not counted (" + counted.skipped_reason + "); judged against the stored counts, made on this CPU");
  } else {
    judged = gates::compare(gates::Baseline{}, head, gates::compare_settings(cfg));  // "new": reported, not gated
    notes.push_back("counted: not judged: the merge-base was not counted (" + counted.skipped_reason + ") and " +
                    (has_stored ? "the stored counts were made on " + stored_cpu(*stored) : std::string("no counts are stored")) +
                    " (this CPU: " + here + ")");
  }
  if (counted.ran && has_stored) {
    if (stored_here) {
      const gates::Comparison vs_stored = gates::compare(only_counted(*stored), head, gates::compare_settings(cfg));
      int within = 0;
      for (const auto& v : vs_stored.verdicts) within += v.status == gates::VerdictStatus::same ? 1 : 0;
      notes.push_back("counted: the stored counts were made on this CPU: " + std::to_string(within) + " of " +
                      std::to_string(vs_stored.verdicts.size()) + " within their tolerance (a record; the merge-base judgement gates)");
    } else {
      notes.push_back("counted: the stored counts were made on " + stored_cpu(*stored) + "; kept as a record, not compared on this CPU");
    }
  }
  rows.insert(rows.end(), judged.verdicts.begin(), judged.verdicts.end());
  if (!counted.ran && counted.skipped_is_failure && !stored_here) {
    gates::Verdict v;
    v.key = prefix + "(merge-base counts)";
    v.kind = records::MetricKind::counted;
    v.status = gates::VerdictStatus::needs_more_samples;
    v.rule = "none";
    v.why = "the merge-base could not be counted: " + counted.skipped_reason;
    rows.push_back(v);
  }
  std::sort(rows.begin(), rows.end(), [](const gates::Verdict& a, const gates::Verdict& b) { return a.key < b.key; });
  outcome.comparison.overall = gates::overall_of(rows);
  outcome.overall = worst(outcome.overall, outcome.comparison.overall);
  return notes;
}

nlohmann::json to_json(const CountedBaseReport& r) {
  return {{"ran", r.ran},
          {"base_commit", r.base_commit},
          {"skipped_reason", r.skipped_reason},
          {"skipped_is_failure", r.skipped_is_failure},
          {"seconds", r.seconds},
          {"comparison", r.ran ? gates::to_json(r.comparison) : nlohmann::json(nullptr)}};
}

}  // namespace atlas::runs
