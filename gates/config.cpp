#include "gates/config.hpp"

#include <algorithm>
#include <set>

#include "common/json_file.hpp"
#include "gates/error.hpp"
#include "gates/json_fields.hpp"

namespace atlas::gates {
namespace {

void reject_unknown(const FieldReader& r, const nlohmann::json& obj, const std::string& path,
                    const std::set<std::string>& known) {
  for (const auto& [key, value] : obj.items()) {
    if (!known.count(key)) r.fail(FieldReader::child(path, key), "unknown field", value);
  }
}

Tolerance parse_tolerance(const FieldReader& r, const nlohmann::json& t, const std::string& p) {
  reject_unknown(r, t, p, {"relative", "absolute"});
  Tolerance out{r.number(t, p, "relative"), r.number(t, p, "absolute")};
  if (out.relative < 0) r.fail(FieldReader::child(p, "relative"), "must be >= 0", out.relative);
  if (out.absolute < 0) r.fail(FieldReader::child(p, "absolute"), "must be >= 0", out.absolute);
  return out;
}

void check_positive(const FieldReader& r, const std::string& path, double v) {
  if (!(v > 0)) r.fail(path, "must be > 0", v);
}

QuietBoxThresholds parse_quiet_box(const FieldReader& r, const nlohmann::json& q, const std::string& p) {
  reject_unknown(r, q, p,
                 {"max_load_per_core", "max_foreign_process_cpu_percent", "sample_window_ms",
                  "max_gpu_utilization_percent", "max_gpu_temperature_c", "allow_foreign_gpu_processes",
                  "slowdown_reasons", "monitor_interval_ms", "settle_max_s"});
  QuietBoxThresholds t;
  t.max_load_per_core = r.optional_number(q, p, "max_load_per_core").value_or(t.max_load_per_core);
  t.max_foreign_process_cpu_percent =
      r.optional_number(q, p, "max_foreign_process_cpu_percent").value_or(t.max_foreign_process_cpu_percent);
  if (q.contains("sample_window_ms")) t.sample_window_ms = static_cast<int>(r.integer(q, p, "sample_window_ms"));
  if (q.contains("settle_max_s")) t.settle_max_s = static_cast<int>(r.integer(q, p, "settle_max_s"));
  if (t.settle_max_s < 0) r.fail(FieldReader::child(p, "settle_max_s"), "must be >= 0", t.settle_max_s);
  t.max_gpu_utilization_percent =
      r.optional_number(q, p, "max_gpu_utilization_percent").value_or(t.max_gpu_utilization_percent);
  t.max_gpu_temperature_c = r.optional_number(q, p, "max_gpu_temperature_c").value_or(t.max_gpu_temperature_c);
  t.allow_foreign_gpu_processes =
      r.optional_boolean(q, p, "allow_foreign_gpu_processes").value_or(t.allow_foreign_gpu_processes);
  if (q.contains("slowdown_reasons")) {
    const auto& arr = r.array(q, p, "slowdown_reasons");
    const std::set<std::string> known = {"gpu_idle",           "applications_clocks_setting", "sw_power_cap",
                                         "hw_slowdown",        "sync_boost",                  "sw_thermal_slowdown",
                                         "hw_thermal_slowdown", "hw_power_brake_slowdown",    "display_clock_setting"};
    t.slowdown_reasons.clear();
    const std::string ap = FieldReader::child(p, "slowdown_reasons");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string() || !known.count(arr[i].get<std::string>())) {
        r.fail(FieldReader::index(ap, i), "expected a clocks-event reason name", arr[i]);
      }
      t.slowdown_reasons.push_back(arr[i].get<std::string>());
    }
  }
  if (q.contains("monitor_interval_ms")) t.monitor_interval_ms = static_cast<int>(r.integer(q, p, "monitor_interval_ms"));
  check_positive(r, FieldReader::child(p, "max_load_per_core"), t.max_load_per_core);
  check_positive(r, FieldReader::child(p, "sample_window_ms"), t.sample_window_ms);
  check_positive(r, FieldReader::child(p, "monitor_interval_ms"), t.monitor_interval_ms);
  return t;
}

}  // namespace

Tolerance default_tolerance(const GateConfig& c, records::MetricKind kind) {
  switch (kind) {
    case records::MetricKind::timed: return c.timed_tolerance;
    case records::MetricKind::counted: return c.counted_tolerance;
    case records::MetricKind::accuracy: return c.accuracy_tolerance;
  }
  return {};
}

Tolerance default_tolerance(const GateConfig& c, records::MetricKind kind, const std::string& key) {
  const Tolerance* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& [prefix, t] : c.metric_tolerance) {
    if (key.rfind(prefix, 0) == 0 && (best == nullptr || prefix.size() > best_len)) {
      best = &t;
      best_len = prefix.size();
    }
  }
  return best ? *best : default_tolerance(c, kind);
}

GateConfig parse_gate_config(const nlohmann::json& j, const std::string& source) {
  const FieldReader r(source);
  if (!j.is_object()) r.fail("", "expected an object", j);
  reject_unknown(r, j, "",
                 {"schema_version", "gate", "description", "suites", "suite_config", "min_samples", "rerun_cap",
                  "confirm_timed_regressions", "alpha", "noise",
                  "default_tolerance", "metric_tolerance", "equality_metrics", "target_branch", "quiet_box", "timed",
                  "quiet_machine_classes"});
  const long long version = r.integer(j, "", "schema_version");
  if (version != 1) r.fail("schema_version", "unsupported (this build reads 1)", version);
  GateConfig c;
  c.gate = r.string(j, "", "gate");
  if (c.gate.empty()) r.fail("gate", "must not be empty", c.gate);
  const auto& suites = r.array(j, "", "suites");
  if (suites.empty()) r.fail("suites", "must name at least one suite", suites);
  for (std::size_t i = 0; i < suites.size(); ++i) {
    const std::string p = FieldReader::index("suites", i);
    if (!suites[i].is_string() || suites[i].get<std::string>().empty()) r.fail(p, "expected a suite name", suites[i]);
    const auto name = suites[i].get<std::string>();
    if (std::find(c.suites.begin(), c.suites.end(), name) != c.suites.end()) r.fail(p, "duplicate suite", suites[i]);
    c.suites.push_back(name);
  }
  c.suite_config = r.optional_string(j, "", "suite_config").value_or(c.gate);
  if (j.contains("min_samples")) c.min_samples = static_cast<int>(r.integer(j, "", "min_samples"));
  if (c.min_samples < 2) r.fail("min_samples", "must be >= 2", c.min_samples);
  if (j.contains("rerun_cap")) c.rerun_cap = static_cast<int>(r.integer(j, "", "rerun_cap"));
  if (c.rerun_cap < 0) r.fail("rerun_cap", "must be >= 0", c.rerun_cap);
  if (j.contains("confirm_timed_regressions")) {
    if (!j["confirm_timed_regressions"].is_boolean())
      r.fail("confirm_timed_regressions", "expected true or false", j["confirm_timed_regressions"]);
    c.confirm_timed_regressions = j["confirm_timed_regressions"].get<bool>();
  }
  c.alpha = r.optional_number(j, "", "alpha").value_or(c.alpha);
  if (!(c.alpha > 0 && c.alpha < 1)) r.fail("alpha", "must be in (0, 1)", c.alpha);
  if (j.contains("noise")) {
    const auto& n = r.object(j, "", "noise");
    reject_unknown(r, n, "noise", {"confidence", "resamples"});
    c.noise_confidence = r.optional_number(n, "noise", "confidence").value_or(c.noise_confidence);
    if (!(c.noise_confidence > 0 && c.noise_confidence < 1)) r.fail("noise.confidence", "must be in (0, 1)", c.noise_confidence);
    if (n.contains("resamples")) c.noise_resamples = static_cast<int>(r.integer(n, "noise", "resamples"));
    if (c.noise_resamples < 100) r.fail("noise.resamples", "must be >= 100", c.noise_resamples);
  }
  if (j.contains("default_tolerance")) {
    const auto& t = r.object(j, "", "default_tolerance");
    reject_unknown(r, t, "default_tolerance", {"timed", "counted", "accuracy"});
    if (t.contains("timed")) c.timed_tolerance = parse_tolerance(r, r.object(t, "default_tolerance", "timed"), "default_tolerance.timed");
    if (t.contains("counted")) c.counted_tolerance = parse_tolerance(r, r.object(t, "default_tolerance", "counted"), "default_tolerance.counted");
    if (t.contains("accuracy")) c.accuracy_tolerance = parse_tolerance(r, r.object(t, "default_tolerance", "accuracy"), "default_tolerance.accuracy");
  }
  if (j.contains("metric_tolerance")) {
    const auto& t = r.object(j, "", "metric_tolerance");
    for (const auto& [prefix, v] : t.items()) {
      const std::string p = FieldReader::child("metric_tolerance", prefix);
      if (prefix.empty()) r.fail(p, "a metric-key prefix must not be empty", v);
      c.metric_tolerance[prefix] = parse_tolerance(r, r.object(t, "metric_tolerance", prefix), p);
    }
  }
  if (j.contains("equality_metrics")) {
    const auto& arr = r.array(j, "", "equality_metrics");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string() || arr[i].get<std::string>().empty() ||
          arr[i].get<std::string>().find('/') != std::string::npos)
        r.fail(FieldReader::index("equality_metrics", i), "expected one segment of a metric key (no '/')", arr[i]);
      c.equality_metrics.push_back(arr[i].get<std::string>());
    }
  }
  c.target_branch = r.optional_string(j, "", "target_branch").value_or(c.target_branch);
  if (j.contains("quiet_box")) c.quiet_box = parse_quiet_box(r, r.object(j, "", "quiet_box"), "quiet_box");
  if (j.contains("timed")) c.timed = parse_timed_config(r, j["timed"], "timed");
  if (j.contains("quiet_machine_classes")) {
    const auto& arr = r.array(j, "", "quiet_machine_classes");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string() || arr[i].get<std::string>().empty())
        r.fail(FieldReader::index("quiet_machine_classes", i), "expected a machine class", arr[i]);
      c.quiet_machine_classes.push_back(arr[i].get<std::string>());
    }
  }
  return c;
}

bool timed_baselines_gated(const GateConfig& c, const std::string& machine_class) {
  if (!c.timed.enabled) return true;
  return std::find(c.quiet_machine_classes.begin(), c.quiet_machine_classes.end(), machine_class) !=
         c.quiet_machine_classes.end();
}

std::filesystem::path gate_config_path(const std::string& gate, const std::string& explicit_path,
                                       const std::filesystem::path& source_dir) {
  if (!explicit_path.empty()) return explicit_path;
  const std::filesystem::path rel = std::filesystem::path("gates") / "config" / (gate + ".json");
  if (std::filesystem::exists(rel) || source_dir.empty()) return rel;
  return source_dir / rel;
}

GateConfig load_gate_config(const std::filesystem::path& path) {
  nlohmann::json j;
  try {
    j = read_json_file(path);
  } catch (const InputError& e) {
    throw GateError(e.what());
  }
  return parse_gate_config(j, path.string());
}

nlohmann::json to_json(const GateConfig& c) {
  auto tol = [](const Tolerance& t) { return nlohmann::json{{"relative", t.relative}, {"absolute", t.absolute}}; };
  const auto& q = c.quiet_box;
  nlohmann::json j = {{"schema_version", 1},
          {"gate", c.gate},
          {"suites", c.suites},
          {"suite_config", c.suite_config},
          {"min_samples", c.min_samples},
          {"rerun_cap", c.rerun_cap},
          {"confirm_timed_regressions", c.confirm_timed_regressions},
          {"alpha", c.alpha},
          {"noise", {{"confidence", c.noise_confidence}, {"resamples", c.noise_resamples}}},
          {"default_tolerance",
           {{"timed", tol(c.timed_tolerance)}, {"counted", tol(c.counted_tolerance)}, {"accuracy", tol(c.accuracy_tolerance)}}},
          {"metric_tolerance",
           [&] {
             nlohmann::json m = nlohmann::json::object();
             for (const auto& [k, t] : c.metric_tolerance) m[k] = tol(t);
             return m;
           }()},
          {"equality_metrics", c.equality_metrics},
          {"target_branch", c.target_branch},
          {"quiet_box",
           {{"max_load_per_core", q.max_load_per_core},
            {"max_foreign_process_cpu_percent", q.max_foreign_process_cpu_percent},
            {"sample_window_ms", q.sample_window_ms},
            {"max_gpu_utilization_percent", q.max_gpu_utilization_percent},
            {"max_gpu_temperature_c", q.max_gpu_temperature_c},
            {"allow_foreign_gpu_processes", q.allow_foreign_gpu_processes},
            {"slowdown_reasons", q.slowdown_reasons},
            {"monitor_interval_ms", q.monitor_interval_ms},
            {"settle_max_s", q.settle_max_s}}},
          {"quiet_machine_classes", c.quiet_machine_classes}};
  if (c.timed.enabled) j["timed"] = to_json(c.timed);
  return j;
}

}  // namespace atlas::gates
