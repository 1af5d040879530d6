#include "trends/history.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <limits>
#include <set>
#include <tuple>

#include "common/error.hpp"
#include "records/diff.hpp"
#include "records/record_io.hpp"
#include "records/stats.hpp"
#include "records/store.hpp"
#include "records/test_hooks.hpp"

namespace atlas::trends {
namespace {

std::string cpu_text(const records::MachineInfo& m) {
  std::string t = m.cpu_model.empty() ? "unknown CPU" : m.cpu_model;
  t += ", " + std::to_string(m.cores) + " cores";
  if (!m.gpu_name.empty()) t += ", " + std::to_string(m.gpu_count) + "x " + m.gpu_name;
  return t;
}

std::string model_text(const records::ModelInfo& m) {
  return m.path + " (" + m.format + (m.sha256.empty() ? "" : ", sha256 " + m.sha256.substr(0, 12)) + ")";
}

// Two models are one when their sha256 agree, else (a digest missing) when path and format do.
bool same_model(const records::ModelInfo& a, const records::ModelInfo& b) {
  if (!a.sha256.empty() && !b.sha256.empty()) return a.sha256 == b.sha256;
  return a.path == b.path && a.format == b.format;
}

// "20261129T143320Z" -> seconds since the epoch (0 when it does not read).
std::int64_t compact_utc_seconds(const std::string& s) {
  std::tm tm{};
  if (s.size() < 15 || ::strptime(s.c_str(), "%Y%m%dT%H%M%S", &tm) == nullptr) return 0;
  return static_cast<std::int64_t>(::timegm(&tm));
}

// Whether the box of `r` said it was not quiet (a record never checked is judged by its
// machine class alone: `run --suite` does not check the box).
bool noisy(const records::Record& r) {
  const std::string c = records::box_caveat(r);
  return !c.empty() && c != "not quiet-box checked";
}

struct Entry {
  records::StoredRecord stored;
  records::Record record;
};

std::string verdict_of(const records::Record& r, const std::string& key) {
  if (!r.verdicts.is_object()) return "";
  const auto it = r.verdicts.find("verdicts");
  if (it == r.verdicts.end() || !it->is_array()) return "";
  for (const auto& v : *it) {
    if (!v.is_object() || v.value("metric", "") != key) continue;
    const std::string s = v.value("verdict", "");
    if (s == "regression" || s == "improved") return s;
  }
  return "";
}

// The line's model: the BASELINE's identity, else the newest record's.
std::optional<records::ModelInfo> baseline_model(const std::optional<gates::Baseline>& b) {
  if (!b || !b->identity.is_object() || !b->identity.contains("model") || !b->identity["model"].is_object())
    return std::nullopt;
  const auto& m = b->identity["model"];
  records::ModelInfo out;
  out.path = m.value("path", "");
  out.format = m.value("format", "");
  out.sha256 = m.value("sha256", "");
  return out;
}

Line build_line(std::vector<Entry>& entries, const HistoryOptions& o) {
  Line line;
  const records::Record& newest = entries.back().record;
  line.machine_class = entries.front().stored.machine_class;
  line.gate_or_suite = entries.front().stored.gate_or_suite;
  line.cpu = cpu_text(newest.machine);
  line.cpu_id = short_hash(line.cpu);
  const gates::GateConfig cfg = o.config_for ? o.config_for(line.gate_or_suite) : gates::GateConfig{};
  line.timed_trended = gates::timed_baselines_gated(cfg, line.machine_class);
  const auto baseline = find_baseline(o.baselines_dir, line.machine_class, line.gate_or_suite);

  // The line's model, among the records that could join it.
  std::optional<records::ModelInfo> model = baseline_model(baseline);
  if (!model) {
    for (auto it = entries.rbegin(); it != entries.rend() && !model; ++it)
      if (it->record.valid && records::active_test_hooks(it->record).empty() && !it->stored.dirty)
        model = it->record.model;
  }
  if (model) line.model = model_text(*model);

  // Which records join, and which commits have a merged record (their shards stay out).
  std::set<std::string> merged_commits;
  std::vector<const Entry*> kept;
  std::set<std::string> other_models;
  for (const auto& e : entries) {
    const records::Record& r = e.record;
    if (!r.valid || !records::provenance_problem(r, e.stored).empty()) {
      ++line.left_out.invalid;
    } else if (!records::active_test_hooks(r).empty()) {
      ++line.left_out.test_hooks;
    } else if (e.stored.dirty) {
      ++line.left_out.dirty;
    } else if (model && !same_model(*model, r.model)) {
      ++line.left_out.other_model;
      other_models.insert(model_text(r.model));
    } else {
      kept.push_back(&e);
      if (!r.merged_from.empty()) merged_commits.insert(e.stored.commit);
    }
  }
  line.left_out.other_models.assign(other_models.begin(), other_models.end());
  std::erase_if(kept, [&](const Entry* e) {
    const bool shard = !records::kind_of(e->record).shard.empty();
    const bool drop = shard && merged_commits.count(e->stored.commit) > 0;
    if (drop) ++line.left_out.merged_shards;
    return drop;
  });

  // Commits, ordered by committer time (else the earliest record), then the earliest record.
  std::map<std::string, std::vector<const Entry*>> by_commit;
  for (const Entry* e : kept) by_commit[e->stored.commit].push_back(e);
  struct Order {
    std::int64_t time, first_record;
    std::string sha;
  };
  std::vector<Order> order;
  for (const auto& [sha, es] : by_commit) {
    std::int64_t first = INT64_MAX;
    for (const Entry* e : es) first = std::min(first, compact_utc_seconds(e->stored.utc));
    const auto git_time = o.commit_time ? o.commit_time(sha) : std::nullopt;
    order.push_back({git_time.value_or(first), first, sha});
    Commit c;
    c.sha = sha;
    c.time = git_time.value_or(first);
    c.time_from_git = git_time.has_value();
    line.commits.push_back(c);
  }
  std::sort(order.begin(), order.end(),
            [](const Order& a, const Order& b) { return std::tie(a.time, a.first_record, a.sha) < std::tie(b.time, b.first_record, b.sha); });
  std::vector<Commit> ordered;
  for (const auto& x : order) {
    auto it = std::find_if(line.commits.begin(), line.commits.end(), [&](const Commit& c) { return c.sha == x.sha; });
    ordered.push_back(*it);
  }
  line.commits = std::move(ordered);

  // Points: every sample of every record of a commit, pooled per metric.
  std::set<std::string> timed_left_out;
  for (std::size_t ci = 0; ci < line.commits.size(); ++ci) {
    Commit& commit = line.commits[ci];
    std::map<std::string, Point> points;
    for (const Entry* e : by_commit[commit.sha]) {
      commit.records.push_back(e->stored.path.string());
      const bool box_noisy = noisy(e->record);
      bool dropped_noisy = false;
      for (const auto& [suite_name, suite] : e->record.suites) {
        for (const auto& [metric_name, m] : suite.metrics) {
          const std::string key = gates::metric_key(suite_name, metric_name);
          if (m.kind == records::MetricKind::timed && !line.timed_trended) {
            timed_left_out.insert(key);
            continue;
          }
          if (m.kind == records::MetricKind::timed && box_noisy) {
            dropped_noisy = true;
            continue;
          }
          if (m.samples.empty()) continue;
          auto [sit, fresh] = line.series.try_emplace(key);
          if (fresh) {
            sit->second.key = key;
            sit->second.unit = m.unit;
            sit->second.better = m.better;
            sit->second.kind = m.kind;
            sit->second.identity = records::is_identity_unit(m.unit);
          } else if (sit->second.unit != m.unit || sit->second.kind != m.kind || sit->second.better != m.better) {
            continue;  // another meaning under the same name: never one line
          }
          Point& p = points[key];
          p.commit = ci;
          p.samples.insert(p.samples.end(), m.samples.begin(), m.samples.end());
          const std::string v = verdict_of(e->record, key);
          if (v == "regression" || (!v.empty() && p.verdict.empty())) p.verdict = v;
        }
      }
      if (dropped_noisy) ++line.left_out.noisy;
    }
    for (auto& [key, p] : points) {
      Series& s = line.series[key];
      if (s.identity) {
        const auto id = records::identity_value(p.samples);
        p.median = id.value_or(std::numeric_limits<double>::quiet_NaN());
        p.p10 = p.p90 = p.median;
      } else {
        p.median = records::stats::median(p.samples);
        p.p10 = records::stats::percentile(p.samples, 10);
        p.p90 = records::stats::percentile(p.samples, 90);
      }
      s.points.push_back(std::move(p));
    }
  }
  line.left_out.timed_not_quiet = static_cast<int>(timed_left_out.size());

  if (!kept.empty())
    for (const auto& [name, suite] : kept.back()->record.suites) line.suite_configs[name] = suite.config;
  // The newest gated record's verdict.
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    const auto& v = (*it)->record.verdicts;
    if (!v.is_object() || !v.contains("overall") || !v["overall"].is_string()) continue;
    LastVerdict lv;
    lv.commit = (*it)->stored.commit;
    lv.record = (*it)->stored.path.string();
    lv.overall = v["overall"].get<std::string>();
    if (v.contains("reasons") && v["reasons"].is_array())
      for (const auto& r : v["reasons"])
        if (r.is_string()) lv.reasons.push_back(r.get<std::string>());
    line.last_verdict = lv;
    break;
  }
  return line;
}

}  // namespace

LeftOut& LeftOut::operator+=(const LeftOut& o) {
  invalid += o.invalid;
  test_hooks += o.test_hooks;
  dirty += o.dirty;
  other_model += o.other_model;
  merged_shards += o.merged_shards;
  noisy += o.noisy;
  timed_not_quiet += o.timed_not_quiet;
  for (const auto& m : o.other_models)
    if (std::find(other_models.begin(), other_models.end(), m) == other_models.end()) other_models.push_back(m);
  return *this;
}

std::string Line::id() const { return machine_class + "/" + gate_or_suite + "-" + cpu_id; }

std::string short_hash(const std::string& text) {
  std::uint32_t h = 2166136261u;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 16777619u;
  }
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

std::optional<gates::Baseline> find_baseline(const std::filesystem::path& baselines_dir, const std::string& machine_class,
                                             const std::string& gate) {
  if (baselines_dir.empty()) return std::nullopt;
  std::filesystem::path path;
  try {
    path = gates::baseline_path(baselines_dir, machine_class, gate);
  } catch (const Error&) {
    return std::nullopt;  // a name no BASELINE file can have
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  return gates::load_baseline(path);
}

History load_history(const HistoryOptions& o) {
  History h;
  // Entries by line key; records are listed oldest first, so each list is too.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<Entry>> groups;
  for (auto& s : records::list_records(o.store_dir)) {
    try {
      records::Record r = records::read_record(s.path);
      ++h.records_read;
      auto key = std::make_tuple(s.machine_class, s.gate_or_suite, short_hash(cpu_text(r.machine)));
      groups[key].push_back({std::move(s), std::move(r)});
    } catch (const Error& e) {
      h.unparsable.push_back({s.path, e.what()});
    }
  }
  for (auto& [key, entries] : groups) h.lines.push_back(build_line(entries, o));
  return h;
}

}  // namespace atlas::trends
