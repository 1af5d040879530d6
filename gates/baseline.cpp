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

Tolerance parse_tolerance(const FieldReader& r, const nlohmann::json& tol, const std::string& tp) {
  Tolerance t{r.number(tol, tp, "relative"), r.number(tol, tp, "absolute")};
  if (t.relative < 0) r.fail(FieldReader::child(tp, "relative"), "must be >= 0", t.relative);
  if (t.absolute < 0) r.fail(FieldReader::child(tp, "absolute"), "must be >= 0", t.absolute);
  return t;
}

// {"from": "...", "to": "..."} under `key`, each one of `allowed` when that is not empty.
std::optional<FieldChange<std::string>> parse_string_change(const FieldReader& r, const nlohmann::json& entry,
                                                            const std::string& p, const char* key,
                                                            const std::vector<std::string>& allowed) {
  if (!entry.contains(key)) return std::nullopt;
  const auto& c = r.object(entry, p, key);
  const std::string cp = FieldReader::child(p, key);
  if (allowed.empty()) return FieldChange<std::string>{r.string(c, cp, "from"), r.string(c, cp, "to")};
  return FieldChange<std::string>{r.one_of(c, cp, "from", allowed), r.one_of(c, cp, "to", allowed)};
}

nlohmann::json tolerance_json(const Tolerance& t) { return {{"relative", t.relative}, {"absolute", t.absolute}}; }

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
    if (arr[i].contains("tolerance")) {
      const auto& t = r.object(arr[i], p, "tolerance");
      const std::string tp = FieldReader::child(p, "tolerance");
      h.tolerance = FieldChange<Tolerance>{parse_tolerance(r, r.object(t, tp, "from"), FieldReader::child(tp, "from")),
                                           parse_tolerance(r, r.object(t, tp, "to"), FieldReader::child(tp, "to"))};
    }
    h.unit = parse_string_change(r, arr[i], p, "unit", {});
    h.kind = parse_string_change(r, arr[i], p, "kind", {"timed", "counted", "accuracy"});
    h.better = parse_string_change(r, arr[i], p, "better", {"lower", "higher"});
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
  bm.tolerance = parse_tolerance(r, r.object(m, p, "tolerance"), FieldReader::child(p, "tolerance"));
  bm.frozen = r.boolean(m, p, "frozen");
  bm.samples = r.numbers(m, p, "samples");
  bm.history = parse_history(r, m, p);
  return bm;
}

}  // namespace

bool operator==(const Tolerance& a, const Tolerance& b) { return a.relative == b.relative && a.absolute == b.absolute; }

const char* to_string(HistoryAction a) { return kActions[static_cast<std::size_t>(a)].c_str(); }

std::string metric_key(const std::string& suite, const std::string& metric) { return suite + "/" + metric; }

std::pair<std::string, std::string> split_metric_key(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == key.size()) {
    throw GateError("metric key '" + key + "': expected <suite>/<metric>");
  }
  return {key.substr(0, slash), key.substr(slash + 1)};
}

static void check_path_name(const std::string& what, const std::string& name) {
  const bool plain = !name.empty() && name != "." && name != ".." && name.size() <= 100 &&
                     name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                         std::string::npos;
  if (!plain)
    throw GateError(what + " " + nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                    ": expected 1-100 letters, digits, '.', '_' or '-' (it names a file under the baselines folder)");
}

std::filesystem::path baseline_path(const std::filesystem::path& baselines_dir, const std::string& machine_class,
                                    const std::string& gate) {
  // Both names may come from a record (`baseline init --record R`): a machine_class of
  // "../../x" wrote outside the baselines folder.
  check_path_name("machine class", machine_class);
  check_path_name("gate", gate);
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
  if (h.tolerance) j["tolerance"] = {{"from", tolerance_json(h.tolerance->from)}, {"to", tolerance_json(h.tolerance->to)}};
  if (h.unit) j["unit"] = {{"from", h.unit->from}, {"to", h.unit->to}};
  if (h.kind) j["kind"] = {{"from", h.kind->from}, {"to", h.kind->to}};
  if (h.better) j["better"] = {{"from", h.better->from}, {"to", h.better->to}};
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
                    {"tolerance", tolerance_json(m.tolerance)},
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
  // The file, its machine-class folder and the baselines folder must be what is committed, not
  // links: a BASELINE replaced by a symlink to a loosened copy elsewhere was judged with, while
  // the merge-base check saw a "new" file and a "deleted" one.
  std::filesystem::path p = path;
  for (int level = 0; level < 3 && !p.empty() && p.has_filename(); ++level, p = p.parent_path()) {
    std::error_code ec;
    if (std::filesystem::is_symlink(p, ec))
      throw GateError(path.string() + ": " + (level == 0 ? "the BASELINE" : p.string()) +
                      " is a symlink (refused: a BASELINE must be the committed file itself)");
  }
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
