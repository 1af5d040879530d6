#include "records/record_io.hpp"

#include <cmath>
#include <string_view>

#include "common/error.hpp"
#include "common/json_file.hpp"
#include "common/json_text.hpp"
#include "records/error.hpp"
#include "records/summary.hpp"

namespace atlas::records {
namespace {

using nlohmann::json;

// ---- writing -------------------------------------------------------------------------------

json git_json(const GitInfo& g) {
  return {{"commit", g.commit}, {"branch", g.branch}, {"dirty", g.dirty}, {"diff_sha256", g.diff_sha256}};
}
json build_json(const BuildInfo& b) {
  return {{"compiler", b.compiler}, {"flags", b.flags}, {"build_type", b.build_type}, {"cuda_version", b.cuda_version}};
}
json machine_json(const MachineInfo& m) {
  json j = {{"cpu_model", m.cpu_model},   {"cores", m.cores},           {"memory_bytes", m.memory_bytes},
            {"gpu_name", m.gpu_name},     {"gpu_driver", m.gpu_driver}, {"gpu_count", m.gpu_count},
            {"gpu_clocks", m.gpu_clocks},
            {"machine_class", m.machine_class}, {"hostname", m.hostname}};
  if (!m.detected_machine_class.empty()) j["detected_machine_class"] = m.detected_machine_class;  // only when overridden
  return j;
}
json model_json(const ModelInfo& m) {
  return {{"path", m.path},
          {"format", m.format},
          {"architecture", m.architecture},
          {"parameter_count", m.parameter_count},
          {"sha256", m.sha256}};
}

// ---- reading -------------------------------------------------------------------------------

// Error context: which file, and a JSON pointer to the field being read.
struct Reader {
  const std::string& source;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw RecordError(source + ": " + (where.empty() ? "/" : where) + ": " + what);
  }
  [[noreturn]] void bad(const std::string& where, const char* expected, const json& got) const {
    std::string shown = got.dump(-1, ' ', false, json::error_handler_t::replace);
    if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
    fail(where, std::string("expected ") + expected + ", got " + shown);
  }
  static std::string child(const std::string& where, std::string_view key) {
    // RFC 6901 escaping: '~' -> "~0", '/' -> "~1".
    std::string out = where + "/";
    for (char c : key) {
      if (c == '~') out += "~0";
      else if (c == '/') out += "~1";
      else out += c;
    }
    return out;
  }

  const json* find(const json& obj, const std::string& where, const char* key, bool required) const {
    const auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(child(where, key), "required field is missing");
      return nullptr;
    }
    return &*it;
  }
  const json& object(const json& obj, const std::string& where, const char* key) const {
    const json& v = *find(obj, where, key, true);
    if (!v.is_object()) bad(child(where, key), "an object", v);
    return v;
  }
  std::string str(const json& obj, const std::string& where, const char* key, bool required = true) const {
    const json* v = find(obj, where, key, required);
    if (!v) return {};
    if (!v->is_string()) bad(child(where, key), "a string", *v);
    return v->get<std::string>();
  }
  bool boolean(const json& obj, const std::string& where, const char* key, bool required = true) const {
    const json* v = find(obj, where, key, required);
    if (!v) return false;
    if (!v->is_boolean()) bad(child(where, key), "true or false", *v);
    return v->get<bool>();
  }
  long long integer(const json& obj, const std::string& where, const char* key, bool required = true) const {
    const json* v = find(obj, where, key, required);
    if (!v) return 0;
    if (!v->is_number_integer()) bad(child(where, key), "an integer", *v);
    return v->get<long long>();
  }
  // Free-form JSON: any value; `object_or_null` additionally restricts the type.
  json any(const json& obj, const char* key, const json& fallback) const {
    const auto it = obj.find(key);
    return it == obj.end() ? fallback : *it;
  }
  json object_or_null(const json& obj, const std::string& where, const char* key) const {
    const json* v = find(obj, where, key, false);
    if (!v || v->is_null()) return nullptr;
    if (!v->is_object()) bad(child(where, key), "an object or null", *v);
    return *v;
  }
};

GitInfo git_from(const Reader& rd, const json& j, const std::string& w) {
  GitInfo g;
  g.commit = rd.str(j, w, "commit");
  g.branch = rd.str(j, w, "branch");
  g.dirty = rd.boolean(j, w, "dirty");
  g.diff_sha256 = rd.str(j, w, "diff_sha256", false);
  return g;
}

BuildInfo build_from(const Reader& rd, const json& j, const std::string& w) {
  BuildInfo b;
  b.compiler = rd.str(j, w, "compiler");
  b.flags = rd.str(j, w, "flags", false);
  b.build_type = rd.str(j, w, "build_type");
  b.cuda_version = rd.str(j, w, "cuda_version", false);
  return b;
}

MachineInfo machine_from(const Reader& rd, const json& j, const std::string& w) {
  MachineInfo m;
  m.cpu_model = rd.str(j, w, "cpu_model");
  const long long cores = rd.integer(j, w, "cores");
  if (cores < 0 || cores > 1 << 20) rd.bad(Reader::child(w, "cores"), "a core count >= 0", j["cores"]);
  m.cores = static_cast<int>(cores);
  m.memory_bytes = rd.integer(j, w, "memory_bytes");
  if (m.memory_bytes < 0) rd.bad(Reader::child(w, "memory_bytes"), "a byte count >= 0", j["memory_bytes"]);
  m.gpu_name = rd.str(j, w, "gpu_name", false);
  m.gpu_driver = rd.str(j, w, "gpu_driver", false);
  m.gpu_clocks = rd.any(j, "gpu_clocks", nullptr);
  if (rd.find(j, w, "gpu_count", false)) {
    const long long n = rd.integer(j, w, "gpu_count");
    if (n < 0 || n > 1 << 16) rd.bad(Reader::child(w, "gpu_count"), "a GPU count >= 0", j["gpu_count"]);
    m.gpu_count = static_cast<int>(n);
  }
  m.machine_class = rd.str(j, w, "machine_class");
  if (m.machine_class.empty()) rd.fail(Reader::child(w, "machine_class"), "must not be empty");
  m.hostname = rd.str(j, w, "hostname", false);
  m.detected_machine_class = rd.str(j, w, "detected_machine_class", false);
  return m;
}

ModelInfo model_from(const Reader& rd, const json& j, const std::string& w) {
  ModelInfo m;
  m.path = rd.str(j, w, "path", false);
  m.format = rd.str(j, w, "format", false);
  m.architecture = rd.str(j, w, "architecture", false);
  m.parameter_count = rd.integer(j, w, "parameter_count", false);
  m.sha256 = rd.str(j, w, "sha256", false);
  return m;
}

Metric metric_from(const Reader& rd, const json& j, const std::string& w) {
  if (!j.is_object()) rd.bad(w, "a metric object", j);
  Metric m;
  m.unit = rd.str(j, w, "unit");
  const std::string better = rd.str(j, w, "better");
  if (better == "lower") m.better = Better::lower;
  else if (better == "higher") m.better = Better::higher;
  else rd.bad(Reader::child(w, "better"), "\"lower\" or \"higher\"", j["better"]);
  const std::string kind = rd.str(j, w, "kind");
  if (kind == "timed") m.kind = MetricKind::timed;
  else if (kind == "counted") m.kind = MetricKind::counted;
  else if (kind == "accuracy") m.kind = MetricKind::accuracy;
  else rd.bad(Reader::child(w, "kind"), "\"timed\", \"counted\" or \"accuracy\"", j["kind"]);
  m.description = rd.str(j, w, "description", false);
  const json* samples = rd.find(j, w, "samples", true);
  const std::string sw = Reader::child(w, "samples");
  if (!samples->is_array()) rd.bad(sw, "an array of numbers", *samples);
  m.samples.reserve(samples->size());
  for (std::size_t i = 0; i < samples->size(); ++i) {
    const json& s = (*samples)[i];
    if (!s.is_number() || !std::isfinite(s.get<double>())) rd.bad(sw + "/" + std::to_string(i), "a finite number", s);
    // Counts (tokens, launches, instructions, misses, hashes) are never negative, and none
    // comes near 2^64; a record whose prefilled_tokens was -1000 became a BASELINE through
    // `ratchet` ("improved": fewer tokens) and failed every later run.
    if (m.kind == MetricKind::counted && !(s.get<double>() >= 0 && s.get<double>() < 18446744073709551616.0))
      rd.bad(sw + "/" + std::to_string(i), "a count (>= 0 and < 2^64)", s);
    m.samples.push_back(s.get<double>());
  }
  // `summary` is derived data: checked for shape only, recomputed from samples by to_json.
  if (const json* sum = rd.find(j, w, "summary", false); sum && !sum->is_object()) {
    rd.bad(Reader::child(w, "summary"), "an object", *sum);
  }
  return m;
}

SuiteResult suite_from(const Reader& rd, const std::string& name, const json& j, const std::string& w) {
  if (!j.is_object()) rd.bad(w, "a suite object", j);
  SuiteResult s;
  s.name = name;
  s.config = rd.any(j, "config", json::object());
  if (!s.config.is_object()) rd.bad(Reader::child(w, "config"), "an object", s.config);
  s.details = rd.any(j, "details", json::object());
  const json& metrics = rd.object(j, w, "metrics");
  const std::string mw = Reader::child(w, "metrics");
  for (const auto& [mname, mj] : metrics.items()) {
    if (mname.empty()) rd.fail(mw, "metric name must not be empty");
    s.metrics.emplace(mname, metric_from(rd, mj, Reader::child(mw, mname)));
  }
  return s;
}

}  // namespace

json to_json(const Metric& m) {
  return {{"unit", m.unit},
          {"better", to_string(m.better)},
          {"kind", to_string(m.kind)},
          {"description", m.description},
          {"samples", m.samples},
          {"summary", to_json(summarize(m.samples))}};
}

json to_json(const Record& r) {
  json suites = json::object();
  for (const auto& [name, s] : r.suites) {
    json metrics = json::object();
    for (const auto& [mname, m] : s.metrics) {
      try {
        metrics[mname] = to_json(m);
      } catch (const RecordError& e) {
        throw RecordError("/suites/" + name + "/metrics/" + mname + ": " + e.what());
      }
    }
    suites[name] = {{"config", s.config}, {"details", s.details}, {"metrics", std::move(metrics)}};
  }
  json assets = json::object();
  for (const auto& [path, sha] : r.data_assets) assets[path] = sha;
  json j = json::object();
  j["schema_version"] = r.schema_version;
  j["run_id"] = r.run_id;
  j["start_utc"] = r.start_utc;
  j["end_utc"] = r.end_utc;
  j["gate_or_suite"] = r.gate_or_suite;
  j["git"] = git_json(r.git);
  j["build"] = build_json(r.build);
  j["machine"] = machine_json(r.machine);
  j["model"] = model_json(r.model);
  j["data_assets"] = std::move(assets);
  j["config"] = r.config;
  j["endpoint"] = r.endpoint;
  j["quiet_box"] = r.quiet_box;
  j["suites"] = std::move(suites);
  j["verdicts"] = r.verdicts;
  j["valid"] = r.valid;
  j["invalid_reason"] = r.invalid_reason;
  if (!r.merged_from.empty()) j["merged_from"] = r.merged_from;
  j["command_line"] = r.command_line;
  return j;
}

Metric metric_from_json(const json& j, const std::string& source, const std::string& where) {
  return metric_from(Reader{source}, j, where);
}

Record record_from_json(const json& j, const std::string& source) {
  const Reader rd{source};
  const std::string root;
  if (!j.is_object()) rd.bad(root, "a record object", j);
  Record r;
  const json* version = rd.find(j, root, "schema_version", true);
  if (!version->is_number_integer()) rd.bad("/schema_version", "an integer", *version);
  r.schema_version = version->get<int>();
  if (r.schema_version != kSchemaVersion) {
    rd.fail("/schema_version", "unsupported schema_version " + std::to_string(r.schema_version) +
                                   " (this build reads version " + std::to_string(kSchemaVersion) +
                                   "; see docs/record-schema.md, \"Versioning\")");
  }
  r.run_id = rd.str(j, root, "run_id");
  r.start_utc = rd.str(j, root, "start_utc");
  r.end_utc = rd.str(j, root, "end_utc");
  r.gate_or_suite = rd.str(j, root, "gate_or_suite");
  if (r.gate_or_suite.empty()) rd.fail("/gate_or_suite", "must not be empty");
  r.git = git_from(rd, rd.object(j, root, "git"), "/git");
  r.build = build_from(rd, rd.object(j, root, "build"), "/build");
  r.machine = machine_from(rd, rd.object(j, root, "machine"), "/machine");
  r.model = model_from(rd, rd.object(j, root, "model"), "/model");
  for (const auto& [path, sha] : rd.object(j, root, "data_assets").items()) {
    if (!sha.is_string()) rd.bad(Reader::child("/data_assets", path), "a sha256 hex string", sha);
    r.data_assets.emplace(path, sha.get<std::string>());
  }
  r.config = rd.object(j, root, "config");
  r.endpoint = rd.object_or_null(j, root, "endpoint");
  r.quiet_box = rd.object_or_null(j, root, "quiet_box");
  for (const auto& [name, sj] : rd.object(j, root, "suites").items()) {
    if (name.empty()) rd.fail("/suites", "suite name must not be empty");
    r.suites.emplace(name, suite_from(rd, name, sj, Reader::child("/suites", name)));
  }
  r.verdicts = rd.any(j, "verdicts", nullptr);
  r.valid = rd.boolean(j, root, "valid");
  r.invalid_reason = rd.str(j, root, "invalid_reason", false);
  if (const json* merged = rd.find(j, root, "merged_from", false)) {
    if (!merged->is_array()) rd.bad("/merged_from", "an array of run ids", *merged);
    for (std::size_t i = 0; i < merged->size(); ++i) {
      const json& id = (*merged)[i];
      if (!id.is_string()) rd.bad("/merged_from/" + std::to_string(i), "a run id string", id);
      r.merged_from.push_back(id.get<std::string>());
    }
  }
  if (const json* cl = rd.find(j, root, "command_line", false)) {
    if (!cl->is_array()) rd.bad("/command_line", "an array of arguments", *cl);
    for (std::size_t i = 0; i < cl->size(); ++i) {
      if (!(*cl)[i].is_string()) rd.bad("/command_line/" + std::to_string(i), "an argument string", (*cl)[i]);
      r.command_line.push_back((*cl)[i].get<std::string>());
    }
  }
  if (!r.valid && r.invalid_reason.empty()) rd.fail("/invalid_reason", "an invalid record must say why (valid is false)");
  return r;
}

Record read_record(const std::filesystem::path& path) {
  json j;
  try {
    j = read_json_file(path);
  } catch (const RecordError&) {
    throw;
  } catch (const atlas::Error& e) {
    throw RecordError(e.what());
  }
  return record_from_json(j, path.string());
}

std::string record_text(const Record& r) {
  const json j = to_json(r);
  // A record that would not read back (e.g. an infinite sample, which JSON writes as null) is
  // refused here, before it reaches disk, rather than discovered by the next reader.
  record_from_json(j, "record being written (run_id \"" + r.run_id + "\")");
  // Indented only down to kPrettyJsonLevels (common/json_text.hpp): a record nested deep came
  // out quadratically larger than it went in.
  return dump_pretty(j, json::error_handler_t::replace) + "\n";
}

}  // namespace atlas::records
