#include "gates/ratchet.hpp"

#include "gates/compare.hpp"
#include "gates/error.hpp"
#include "gates/identity.hpp"
#include "records/test_hooks.hpp"

namespace atlas::gates {
namespace {

BaselineMetric from_record_metric(const std::string& key, const records::Metric& m, const GateConfig& cfg) {
  BaselineMetric bm;
  bm.value = candidate_value(m);
  bm.unit = m.unit;
  bm.better = m.better;
  bm.kind = m.kind;
  bm.tolerance = default_tolerance(cfg, m.kind, key);
  bm.samples = m.samples;
  return bm;
}

/// A record made with a test hook (a planted slowdown) measures the hook, not the code.
void require_clean(const records::Record& r, const std::string& what) {
  const auto hooks = records::active_test_hooks(r);
  if (hooks.empty()) return;
  std::string list;
  for (const auto& h : hooks) list += (list.empty() ? "" : ", ") + h;
  throw GateError(what + ": the record (commit " + r.git.commit + ") was made with a test hook active (" + list +
                  "); it cannot move a baseline");
}

void require_reason(const std::string& reason, const std::string& what) {
  if (reason.empty()) throw GateError(what + ": a --reason is required");
}

BaselineMetric& existing(Baseline& b, const std::string& key) {
  const auto it = b.metrics.find(key);
  if (it == b.metrics.end()) {
    throw GateError("baseline " + b.gate + "/" + b.machine_class + ": no metric '" + key + "'");
  }
  return it->second;
}

void set_frozen(Baseline& b, const std::string& key, bool frozen, const std::string& reason, const ChangeStamp& stamp) {
  const auto action = frozen ? HistoryAction::freeze : HistoryAction::unfreeze;
  const char* verb = frozen ? "freeze" : "unfreeze";
  require_reason(reason, verb);
  if (key.empty()) {
    if (b.frozen == frozen) throw GateError(std::string(verb) + ": the file is already " + (frozen ? "frozen" : "unfrozen"));
    b.frozen = frozen;
    b.history.push_back({stamp.commit, stamp.date, std::nullopt, std::nullopt, reason, action, ""});
    return;
  }
  auto& m = existing(b, key);
  if (m.frozen == frozen) throw GateError(std::string(verb) + ": metric '" + key + "' is already " + (frozen ? "frozen" : "unfrozen"));
  m.frozen = frozen;
  m.history.push_back({stamp.commit, stamp.date, m.value, m.value, reason, action, ""});
}

}  // namespace

Baseline init_baseline(const records::Record& r, const GateConfig& cfg, const std::string& machine_class,
                       const ChangeStamp& stamp, const std::string& reason) {
  require_clean(r, "baseline init");
  Baseline b;
  b.gate = cfg.gate;
  b.machine_class = machine_class;
  const bool keep_timed = timed_baselines_gated(cfg, machine_class);
  for (const auto& [suite_name, suite] : r.suites) {
    for (const auto& [metric_name, m] : suite.metrics) {
      if (m.samples.empty()) continue;
      if (m.kind == records::MetricKind::timed && !keep_timed) continue;
      auto bm = from_record_metric(metric_key(suite_name, metric_name), m, cfg);
      bm.history.push_back({stamp.commit, stamp.date, std::nullopt, bm.value, reason, HistoryAction::init, ""});
      b.metrics.emplace(metric_key(suite_name, metric_name), std::move(bm));
    }
  }
  if (b.metrics.empty()) throw GateError("baseline init: the record has no metric with samples");
  b.identity = identity_of(r);
  return b;
}

RatchetResult ratchet(Baseline& b, const records::Record& record, const GateConfig& cfg, const ChangeStamp& stamp) {
  require_clean(record, "baseline ratchet");
  RatchetResult out;
  // A file made before identities existed learns them from the first clean record; suites new
  // to the baseline add theirs. A differing identity is the gate's error, not ratchet's to fix.
  if (!b.frozen) {
    const nlohmann::json id = identity_of(record);
    if (!b.identity.is_object()) b.identity = id;
    for (const auto& [suite, config] : id["suites"].items())
      if (!b.identity["suites"].contains(suite)) b.identity["suites"][suite] = config;
  }
  const Comparison cmp = compare(b, record, compare_settings(cfg));
  const bool keep_timed = timed_baselines_gated(cfg, b.machine_class);
  for (const auto& v : cmp.verdicts) {
    if (v.kind == records::MetricKind::timed && !keep_timed &&
        (v.status == VerdictStatus::improved || v.status == VerdictStatus::new_metric)) {
      out.timed_not_stored.push_back(v.key);
      continue;
    }
    if (v.status == VerdictStatus::improved) {
      auto& m = b.metrics.at(v.key);
      if (b.frozen || m.frozen) {
        out.frozen.push_back(v.key);
        continue;
      }
      const auto* c = find_metric(record, v.key);
      m.history.push_back({stamp.commit, stamp.date, m.value, *v.candidate_value, v.why, HistoryAction::ratchet, ""});
      m.value = *v.candidate_value;
      m.samples = c->samples;
      out.tightened.push_back(v.key);
    } else if (v.status == VerdictStatus::new_metric && v.candidate_value) {
      if (b.frozen) {
        out.frozen.push_back(v.key);
        continue;
      }
      auto bm = from_record_metric(v.key, *find_metric(record, v.key), cfg);
      bm.history.push_back({stamp.commit, stamp.date, std::nullopt, bm.value, "new metric added by ratchet",
                            HistoryAction::init, ""});
      b.metrics.emplace(v.key, std::move(bm));
      out.added.push_back(v.key);
    }
  }
  return out;
}

void accept(Baseline& b, const std::string& key, const records::Record& record, const std::string& reason,
            const GateConfig& cfg, const ChangeStamp& stamp) {
  require_clean(record, "baseline accept");
  require_reason(reason, "accept");
  split_metric_key(key);
  if (b.frozen) throw GateError("accept " + key + ": the baseline file is frozen; unfreeze it first");
  const auto* c = find_metric(record, key);
  if (!c || c->samples.empty()) throw GateError("accept " + key + ": the record has no samples for this metric");
  auto fresh = from_record_metric(key, *c, cfg);
  // Accepting a metric adopts the config its suite ran with (e.g. a new prompt length).
  const auto suite = split_metric_key(key).first;
  if (b.identity.is_object() && record.suites.count(suite)) b.identity["suites"][suite] = record.suites.at(suite).config;
  const auto it = b.metrics.find(key);
  if (it == b.metrics.end()) {
    fresh.history.push_back({stamp.commit, stamp.date, std::nullopt, fresh.value, reason, HistoryAction::accept, ""});
    b.metrics.emplace(key, std::move(fresh));
    return;
  }
  auto& m = it->second;
  if (m.frozen) throw GateError("accept " + key + ": the metric is frozen; unfreeze it first");
  // The entry names every field it moves, with both ends: the merge-base check licenses only
  // what an entry names (an entry saying only old == new would otherwise license any tolerance or
  // unit).
  HistoryEntry h{stamp.commit, stamp.date, m.value, fresh.value, reason, HistoryAction::accept, ""};
  if (!(m.tolerance == fresh.tolerance)) h.tolerance = FieldChange<Tolerance>{m.tolerance, fresh.tolerance};
  if (m.unit != fresh.unit) h.unit = FieldChange<std::string>{m.unit, fresh.unit};
  if (m.kind != fresh.kind) h.kind = FieldChange<std::string>{records::to_string(m.kind), records::to_string(fresh.kind)};
  if (m.better != fresh.better)
    h.better = FieldChange<std::string>{records::to_string(m.better), records::to_string(fresh.better)};
  m.history.push_back(std::move(h));
  m.value = fresh.value;
  // ... and the tolerance the config now gives it: a reviewed accept is how a changed
  // metric_tolerance reaches a stored metric (ratchet never loosens one).
  m.tolerance = fresh.tolerance;
  m.samples = std::move(fresh.samples);
  m.unit = fresh.unit;
  m.kind = fresh.kind;
  m.better = fresh.better;
}

void remove_metric(Baseline& b, const std::string& key, const std::string& reason, const ChangeStamp& stamp) {
  require_reason(reason, "remove");
  if (b.frozen) throw GateError("remove " + key + ": the baseline file is frozen; unfreeze it first");
  const auto& m = existing(b, key);
  if (m.frozen) throw GateError("remove " + key + ": the metric is frozen; unfreeze it first");
  b.history.push_back({stamp.commit, stamp.date, m.value, std::nullopt, reason, HistoryAction::remove, key});
  b.metrics.erase(key);
}

void freeze(Baseline& b, const std::string& key, const std::string& reason, const ChangeStamp& stamp) {
  set_frozen(b, key, true, reason, stamp);
}

void unfreeze(Baseline& b, const std::string& key, const std::string& reason, const ChangeStamp& stamp) {
  set_frozen(b, key, false, reason, stamp);
}

}  // namespace atlas::gates
