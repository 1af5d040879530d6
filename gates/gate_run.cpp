#include "gates/gate_run.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "gates/report.hpp"

namespace atlas::gates {
namespace {

std::vector<std::string> suites_needing_samples(const Comparison& c) {
  std::set<std::string> out;
  for (const auto& v : c.verdicts) {
    if (v.status == VerdictStatus::needs_more_samples) out.insert(split_metric_key(v.key).first);
  }
  return {out.begin(), out.end()};
}

/// Keys of the verdicts with `status` (and `kind`, when given), in verdict order.
std::vector<std::string> keys_with(const Comparison& c, VerdictStatus status,
                                   std::optional<records::MetricKind> kind = std::nullopt) {
  std::vector<std::string> out;
  for (const auto& v : c.verdicts)
    if (v.status == status && (!kind || v.kind == *kind)) out.push_back(v.key);
  return out;
}

std::vector<std::string> suites_with_timed_regressions(const Comparison& c) {
  std::set<std::string> out;
  for (const auto& v : c.verdicts)
    if (v.status == VerdictStatus::regression && v.kind == records::MetricKind::timed)
      out.insert(split_metric_key(v.key).first);
  return {out.begin(), out.end()};
}

nlohmann::json verdicts_json(const GateOutcome& o) {
  nlohmann::json j = to_json(o.comparison);
  j["overall"] = to_string(o.overall);
  nlohmann::json attempts = nlohmann::json::array();
  for (const auto& a : o.attempts) attempts.push_back(to_json(a));
  j["attempts"] = attempts;
  j["dropped_attempts"] = o.dropped_attempts;
  if (!o.reason.empty()) j["reason"] = o.reason;
  return j;
}

}  // namespace

void pool_samples(records::Record& into, const records::Record& from) {
  for (const auto& [suite_name, suite] : from.suites) {
    auto it = into.suites.find(suite_name);
    if (it == into.suites.end()) {
      into.suites.emplace(suite_name, suite);
      continue;
    }
    for (const auto& [metric_name, m] : suite.metrics) {
      auto mit = it->second.metrics.find(metric_name);
      if (mit == it->second.metrics.end()) {
        it->second.metrics.emplace(metric_name, m);
      } else {
        mit->second.samples.insert(mit->second.samples.end(), m.samples.begin(), m.samples.end());
      }
    }
  }
  if (!from.end_utc.empty()) into.end_utc = from.end_utc;
}

GateOutcome run_gate(const GateConfig& cfg, const Baseline& baseline, const RunSuites& run_suites, AttemptGuard* guard) {
  GateOutcome out;
  const CompareSettings settings = compare_settings(cfg);
  std::vector<std::string> suites = cfg.suites;
  bool have_record = false;
  const int max_attempts = 1 + cfg.rerun_cap;
  std::vector<std::string> because;
  for (int attempt = 0; attempt < max_attempts && !suites.empty(); ++attempt) {
    AttemptLog log{attempt, suites, false, "", false, because};
    if (guard) guard->begin(attempt);
    records::Record r = run_suites(attempt, suites);
    if (guard) {
      if (auto why = guard->end(attempt)) {
        log.dropped = true;
        log.drop_reason = *why;
      }
    }
    out.attempts.push_back(log);
    if (log.dropped) {
      ++out.dropped_attempts;
      continue;  // same suites again
    }
    if (!r.valid) {
      out.record = std::move(r);
      out.overall = Overall::regression;
      out.reason = "the suite run failed: " + out.record.invalid_reason;
      out.record.verdicts = verdicts_json(out);
      return out;
    }
    if (!have_record) {
      out.record = std::move(r);
      have_record = true;
    } else {
      pool_samples(out.record, r);
    }
    out.comparison = compare(baseline, out.record, settings);
    suites = suites_needing_samples(out.comparison);
    because = keys_with(out.comparison, VerdictStatus::needs_more_samples);
  }
  if (!have_record) {
    out.overall = Overall::inconclusive;
    out.reason = "all " + std::to_string(out.dropped_attempts) + " attempts were dropped (" +
                 (out.attempts.empty() ? std::string("no attempt") : out.attempts.back().drop_reason) + ")";
    out.record.valid = true;
    out.record.verdicts = verdicts_json(out);
    return out;
  }
  // Confirmation: one fresh run of the suites with timed regressions, judged on its own samples.
  // A regression it contradicts (same or better there) was drift between runs, not evidence:
  // needs more samples. A run too small to decide, a dropped run or a lost metric leaves the
  // regression standing; a failed run, or an exact metric that regresses in it, fails the gate.
  bool downgraded = false;
  if (cfg.confirm_timed_regressions) {
    const std::vector<std::string> regressed = suites_with_timed_regressions(out.comparison);
    if (!regressed.empty()) {
      const int attempt = static_cast<int>(out.attempts.size());
      AttemptLog log{attempt, regressed, false, "", true,
                     keys_with(out.comparison, VerdictStatus::regression, records::MetricKind::timed)};
      if (guard) guard->begin(attempt);
      records::Record confirm = run_suites(attempt, regressed);
      if (guard) {
        if (auto why = guard->end(attempt)) {
          log.dropped = true;
          log.drop_reason = *why;
          ++out.dropped_attempts;
        }
      }
      out.attempts.push_back(log);
      if (!confirm.valid && !log.dropped) {
        out.overall = Overall::regression;
        out.reason = "the confirmation run failed: " + confirm.invalid_reason;
        out.record.verdicts = verdicts_json(out);
        return out;
      }
      // Judged against the baseline of the confirmed suites only (the others did not run).
      Baseline confirmed = baseline;
      std::erase_if(confirmed.metrics, [&](const auto& kv) {
        return std::find(regressed.begin(), regressed.end(), split_metric_key(kv.first).first) == regressed.end();
      });
      const Comparison alone = log.dropped ? Comparison{} : compare(confirmed, confirm, settings);
      auto in_alone = [&](const std::string& key) -> const Verdict* {
        const auto it = std::find_if(alone.verdicts.begin(), alone.verdicts.end(),
                                     [&](const Verdict& a) { return a.key == key; });
        return it == alone.verdicts.end() ? nullptr : &*it;
      };
      for (auto& v : out.comparison.verdicts) {
        if (v.status != VerdictStatus::regression || v.kind != records::MetricKind::timed) continue;
        if (log.dropped) {
          v.why += "; unconfirmed: the confirmation run was dropped (" + log.drop_reason + ")";
          continue;
        }
        const Verdict* a = in_alone(v.key);
        if (a != nullptr && (a->status == VerdictStatus::same || a->status == VerdictStatus::improved)) {
          v.status = VerdictStatus::needs_more_samples;
          v.why += "; not reproduced in a fresh confirmation run (" + std::string(to_string(a->status)) + ", median " +
                   format_value(a->candidate_value) + "): drift between runs, not evidence";
          downgraded = true;
        } else {
          v.why += "; confirmation run: " + (a == nullptr ? std::string("not run") : std::string(to_string(a->status))) +
                   (a != nullptr && a->candidate_value ? ", median " + format_value(a->candidate_value) : std::string());
        }
      }
      // Exact metrics of the confirmed suites must hold in the fresh run too.
      for (const auto& a : alone.verdicts) {
        const bool fails = a.status == VerdictStatus::regression || a.status == VerdictStatus::missing ||
                           a.status == VerdictStatus::incomparable;
        if (!fails || a.kind == records::MetricKind::timed) continue;
        for (auto& v : out.comparison.verdicts) {
          if (v.key != a.key || v.status == a.status) continue;
          v.status = a.status;
          v.why = "in the confirmation run: " + a.why;
        }
      }
      out.comparison.overall = overall_of(out.comparison.verdicts);
    }
  }
  out.overall = out.comparison.overall;
  if (out.overall == Overall::inconclusive) {
    out.reason = downgraded ? "a timed regression was not reproduced by the confirmation run"
                            : "some metrics still need more samples after " + std::to_string(cfg.rerun_cap) + " reruns";
  }
  out.record.verdicts = verdicts_json(out);
  return out;
}

GateDecision decide(const GateOutcome& outcome, bool merge_base_ok, bool box_quiet, bool allow_noisy) {
  GateDecision d;
  d.overall = outcome.overall;
  if (!outcome.reason.empty()) d.reasons.push_back(outcome.reason);
  // The final line names what failed (or left the answer open), not only that something did.
  if (const std::string named = failing_metrics(outcome.comparison.verdicts); !named.empty()) d.reasons.push_back(named);
  if (!merge_base_ok) {
    d.overall = Overall::regression;
    d.reasons.push_back("a BASELINE was loosened since the merge-base without an accept entry");
  }
  if (box_quiet) return d;
  if (allow_noisy) {
    d.reasons.push_back("the box was not quiet; judged anyway (--allow-noisy)");
    return d;
  }
  // Noise cannot move an exact metric, a failed run or a loosened baseline: those stand.
  const bool noise_proof_failure =
      !merge_base_ok || (d.overall == Overall::regression && !outcome.reason.empty()) ||
      std::any_of(outcome.comparison.verdicts.begin(), outcome.comparison.verdicts.end(), [](const Verdict& v) {
        const bool fails = v.status == VerdictStatus::regression || v.status == VerdictStatus::missing ||
                           v.status == VerdictStatus::incomparable;
        return fails && (v.kind != records::MetricKind::timed || v.status != VerdictStatus::regression);
      });
  if (noise_proof_failure) return d;
  d.overall = Overall::inconclusive;
  d.reasons.push_back("the box was not quiet, so timed verdicts are not trusted (pass --allow-noisy to judge anyway)");
  return d;
}

nlohmann::json to_json(const AttemptLog& a) {
  return {{"attempt", a.attempt},
          {"suites", a.suites},
          {"dropped", a.dropped},
          {"drop_reason", a.drop_reason},
          {"confirmation", a.confirmation},
          {"because", a.because}};
}

}  // namespace atlas::gates
