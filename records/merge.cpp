#include "records/merge.hpp"

#include <map>
#include <string>

#include "common/sha256.hpp"
#include "records/error.hpp"

namespace atlas::records {
namespace {

using nlohmann::json;

std::string shown(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

[[noreturn]] void conflict(std::size_t shard, const std::string& field, const json& first, const json& other) {
  throw RecordError("merge: shard " + std::to_string(shard) + " disagrees with shard 0 on " + field + ": " +
                    shown(other) + " vs " + shown(first));
}

// Adds every key of `from` to `into`; a key present in both with different values is an error.
void merge_object(json& into, const json& from, std::size_t shard, const std::string& field) {
  for (const auto& [k, v] : from.items()) {
    const auto it = into.find(k);
    if (it == into.end()) into[k] = v;
    else if (*it != v) conflict(shard, field + "/" + k, *it, v);
  }
}

void merge_suite(SuiteResult& into, const SuiteResult& from, std::size_t shard) {
  const std::string where = "/suites/" + from.name;
  if (into.config != from.config) conflict(shard, where + "/config", into.config, from.config);
  if (into.details.is_object() && from.details.is_object()) {
    merge_object(into.details, from.details, shard, where + "/details");
  } else if (into.details != from.details) {
    conflict(shard, where + "/details", into.details, from.details);
  }
  for (const auto& [name, m] : from.metrics) {
    auto it = into.metrics.find(name);
    if (it == into.metrics.end()) {
      into.metrics.emplace(name, m);
      continue;
    }
    Metric& t = it->second;
    const std::string mw = where + "/metrics/" + name;
    if (t.unit != m.unit) conflict(shard, mw + "/unit", t.unit, m.unit);
    if (t.better != m.better) conflict(shard, mw + "/better", to_string(t.better), to_string(m.better));
    if (t.kind != m.kind) conflict(shard, mw + "/kind", to_string(t.kind), to_string(m.kind));
    t.samples.insert(t.samples.end(), m.samples.begin(), m.samples.end());
    if (t.description.empty()) t.description = m.description;
  }
}

// "i/N" of a nightly shard record (verdicts.shard), "" for other records.
std::string shard_of(const Record& r) {
  if (!r.verdicts.is_object() || !r.verdicts.contains("shard") || !r.verdicts["shard"].is_object()) return "";
  const auto& s = r.verdicts["shard"];
  return std::to_string(s.value("index", 0)) + "/" + std::to_string(s.value("count", 1));
}

// The same record twice would double its samples; two runs of one shard would mix two
// measurements of the same suites as if they were one run.
void check_distinct_shards(std::span<const Record> shards) {
  std::map<std::string, std::size_t> by_run, by_shard;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Record& s = shards[i];
    if (const auto [it, fresh] = by_run.emplace(s.run_id, i); !fresh) {
      throw RecordError("merge: shard " + std::to_string(i) + " is the same run as shard " + std::to_string(it->second) +
                        " (run_id " + s.run_id + "); give each shard once");
    }
    const std::string sh = shard_of(s);
    if (sh.empty()) continue;
    if (const auto [it, fresh] = by_shard.emplace(sh, i); !fresh) {
      throw RecordError("merge: records " + std::to_string(it->second) + " (run_id " + shards[it->second].run_id +
                        ") and " + std::to_string(i) + " (run_id " + s.run_id + ") are two runs of nightly shard " + sh +
                        "; keep one of them");
    }
  }
}

}  // namespace

Record merge_records(std::span<const Record> shards) {
  if (shards.empty()) throw RecordError("merge: no records given");
  check_distinct_shards(shards);
  Record out = shards[0];
  out.verdicts = nullptr;
  out.merged_from.clear();
  std::string ids;
  std::string reasons = out.valid ? "" : out.invalid_reason;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const Record& s = shards[i];
    out.merged_from.push_back(s.run_id);
    ids += s.run_id + "\n";
    if (i == 0) continue;
    if (s.git.commit != out.git.commit) conflict(i, "/git/commit", out.git.commit, s.git.commit);
    if (s.git.dirty != out.git.dirty) conflict(i, "/git/dirty", out.git.dirty, s.git.dirty);
    if (s.git.diff_sha256 != out.git.diff_sha256) conflict(i, "/git/diff_sha256", out.git.diff_sha256, s.git.diff_sha256);
    if (s.machine.machine_class != out.machine.machine_class) {
      conflict(i, "/machine/machine_class", out.machine.machine_class, s.machine.machine_class);
    }
    if (s.model.sha256 != out.model.sha256) conflict(i, "/model/sha256", out.model.sha256, s.model.sha256);
    if (s.model.path != out.model.path) conflict(i, "/model/path", out.model.path, s.model.path);
    for (const auto& [path, sha] : s.data_assets) {
      const auto [it, inserted] = out.data_assets.emplace(path, sha);
      if (!inserted && it->second != sha) conflict(i, "/data_assets/" + path, it->second, sha);
    }
    merge_object(out.config, s.config, i, "/config");
    if (s.start_utc < out.start_utc) out.start_utc = s.start_utc;  // ISO-8601 UTC sorts as text
    if (s.end_utc > out.end_utc) out.end_utc = s.end_utc;
    if (s.gate_or_suite != out.gate_or_suite) out.gate_or_suite = "merged";
    if (out.endpoint.is_null()) out.endpoint = s.endpoint;
    if (out.quiet_box.is_null()) out.quiet_box = s.quiet_box;
    if (!s.valid) {
      out.valid = false;
      if (!reasons.empty()) reasons += "; ";
      reasons += s.invalid_reason;
    }
    for (const auto& [name, suite] : s.suites) {
      auto it = out.suites.find(name);
      if (it == out.suites.end()) out.suites.emplace(name, suite);
      else merge_suite(it->second, suite, i);
    }
  }
  out.invalid_reason = out.valid ? "" : reasons;
  out.run_id = "merged-" + sha256_hex(ids).substr(0, 12);
  return out;
}

}  // namespace atlas::records
