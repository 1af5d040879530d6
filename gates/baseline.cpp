#include "gates/baseline.hpp"

#include "common/atomic_file.hpp"
#include "common/json_file.hpp"
#include "gates/error.hpp"
#include "gates/json_fields.hpp"

namespace atlas::gates {
namespace {

const std::vector<std::string> kActions = {"ratchet", "accept", "freeze", "unfreeze", "init", "remove"};

HistoryAction parse_action(const std::string& s) {
  for (std::size_t i = 0; i < kActions.size(); ++i) {
    if (kActions[i] == s) return static_cast<HistoryAction>(i);
  }
  return HistoryAction::init;  // unreachable: one_of() validated s
}

nlohmann::json optional_to_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::vector<HistoryEntry> parse_history(const FieldReader& r, const nlohmann::json& parent, const std::string& path) {
  std::vector<HistoryEntry> out;
  if (!parent.contains("history")) return out;
  const auto& arr = r.array(parent, path, "history");
  const std::string hp = FieldReader::child(path, "history");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string p = FieldReader::index(hp, i);
    if (!arr[i].is_object()) r.fail(p, "expected an object", arr[i]);
    HistoryEntry h;
    h.commit = r.string(arr[i], p, "commit");
    h.date = r.string(arr[i], p, "date");
    h.old_value = r.number_or_null(arr[i], p, "old");
    h.new_value = r.number_or_null(arr[i], p, "new");
    h.reason = r.string(arr[i], p, "reason");
    h.action = parse_action(r.one_of(arr[i], p, "action", kActions));
    h.metric = r.optional_string(arr[i], p, "metric").value_or("");
    out.push_back(std::move(h));
  }
  return out;
}

BaselineMetric parse_metric(const FieldReader& r, const nlohmann::json& m, const std::string& p) {
  BaselineMetric bm;
  bm.value = r.number(m, p, "value");
  bm.unit = r.string(m, p, "unit");
  bm.better = r.one_of(m, p, "better", {"lower", "higher"}) == "lower" ? records::Better::lower : records::Better::higher;
  const std::string kind = r.one_of(m, p, "kind", {"timed", "counted", "accuracy"});
  bm.kind = kind == "timed" ? records::MetricKind::timed
            : kind == "counted" ? records::MetricKind::counted
                                : records::MetricKind::accuracy;
  const auto& tol = r.object(m, p, "tolerance");
  const std::string tp = FieldReader::child(p, "tolerance");
  bm.tolerance.relative = r.number(tol, tp, "relative");
  bm.tolerance.absolute = r.number(tol, tp, "absolute");
  if (bm.tolerance.relative < 0) r.fail(FieldReader::child(tp, "relative"), "must be >= 0", bm.tolerance.relative);
  if (bm.tolerance.absolute < 0) r.fail(FieldReader::child(tp, "absolute"), "must be >= 0", bm.tolerance.absolute);
  bm.frozen = r.boolean(m, p, "frozen");
  bm.samples = r.numbers(m, p, "samples");
  bm.history = parse_history(r, m, p);
  return bm;
}

}  // namespace

const char* to_string(HistoryAction a) { return kActions[static_cast<std::size_t>(a)].c_str(); }

std::string metric_key(const std::string& suite, const std::string& metric) { return suite + "/" + metric; }

std::pair<std::string, std::string> split_metric_key(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == key.size()) {
    throw GateError("metric key '" + key + "': expected <suite>/<metric>");
  }
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::filesystem::path baseline_path(const std::filesystem::path& baselines_dir, const std::string& machine_class,
                                    const std::string& gate) {
  return baselines_dir / machine_class / (gate + ".BASELINE.json");
}

Baseline parse_baseline(const nlohmann::json& j, const std::string& source) {
  const FieldReader r(source);
  if (!j.is_object()) r.fail("", "expected an object", j);
  Baseline b;
  const long long version = r.integer(j, "", "schema_version");
  if (version != kBaselineSchemaVersion) {
    r.fail("schema_version", "unsupported (this build reads " + std::to_string(kBaselineSchemaVersion) + ")", version);
  }
  b.schema_version = static_cast<int>(version);
  b.gate = r.string(j, "", "gate");
  if (b.gate.empty()) r.fail("gate", "must not be empty", b.gate);
  b.machine_class = r.string(j, "", "machine_class");
  if (b.machine_class.empty()) r.fail("machine_class", "must not be empty", b.machine_class);
  b.frozen = r.boolean(j, "", "frozen");
  const auto& metrics = r.object(j, "", "metrics");
  for (const auto& [key, m] : metrics.items()) {
    const std::string p = FieldReader::child("metrics", key);
    if (key.find('/') == std::string::npos || key.front() == '/' || key.back() == '/') {
      r.fail(p, "metric key must be <suite>/<metric>", key);
    }
    if (!m.is_object()) r.fail(p, "expected an object", m);
    b.metrics.emplace(key, parse_metric(r, m, p));
  }
  b.history = parse_history(r, j, "");
  if (j.contains("identity") && !j["identity"].is_null()) {
    const auto& id = r.object(j, "", "identity");
    if (id.contains("model") && !id["model"].is_object()) r.fail("identity.model", "expected an object", id["model"]);
    if (id.contains("suites") && !id["suites"].is_object()) r.fail("identity.suites", "expected an object", id["suites"]);
    b.identity = id;
  }
  return b;
}

nlohmann::json to_json(const HistoryEntry& h) {
  nlohmann::json j = {{"commit", h.commit},
                      {"date", h.date},
                      {"old", optional_to_json(h.old_value)},
                      {"new", optional_to_json(h.new_value)},
                      {"reason", h.reason},
                      {"action", to_string(h.action)}};
  if (!h.metric.empty()) j["metric"] = h.metric;
  return j;
}

nlohmann::json to_json(const Baseline& b) {
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& [key, m] : b.metrics) {
    nlohmann::json history = nlohmann::json::array();
    for (const auto& h : m.history) history.push_back(to_json(h));
    metrics[key] = {{"value", m.value},
                    {"unit", m.unit},
                    {"better", records::to_string(m.better)},
                    {"kind", records::to_string(m.kind)},
                    {"tolerance", {{"relative", m.tolerance.relative}, {"absolute", m.tolerance.absolute}}},
                    {"frozen", m.frozen},
                    {"samples", m.samples},
                    {"history", history}};
  }
  nlohmann::json history = nlohmann::json::array();
  for (const auto& h : b.history) history.push_back(to_json(h));
  nlohmann::json j = {{"schema_version", b.schema_version}, {"gate", b.gate},     {"machine_class", b.machine_class},
                      {"frozen", b.frozen},                 {"metrics", metrics}, {"history", history}};
  if (!b.identity.is_null()) j["identity"] = b.identity;
  return j;
}

Baseline load_baseline(const std::filesystem::path& path) {
  nlohmann::json j;
  try {
    j = read_json_file(path);
  } catch (const InputError& e) {
    throw GateError(e.what());
  }
  return parse_baseline(j, path.string());
}

void save_baseline(const std::filesystem::path& path, const Baseline& b) { write_json_file_atomic(path, to_json(b)); }

}  // namespace atlas::gates
