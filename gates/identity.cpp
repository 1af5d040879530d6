#include "gates/identity.hpp"

#include <set>

#include "gates/error.hpp"

namespace atlas::gates {
namespace {

std::string model_text(const std::string& path, const std::string& format, const std::string& sha) {
  return (path.empty() ? std::string("?") : path) + " (format " + (format.empty() ? "?" : format) + ", sha256 " +
         (sha.empty() ? "?" : sha.substr(0, 16)) + ")";
}

std::string shown(const nlohmann::json& j) {
  std::string s = j.dump();
  return s.size() > 160 ? s.substr(0, 157) + "..." : s;
}

// The keys of two objects whose values differ, "a, b".
std::string differing_keys(const nlohmann::json& a, const nlohmann::json& b) {
  std::string out;
  if (!a.is_object() || !b.is_object()) return "(the whole config)";
  auto add = [&](const std::string& k) { out += (out.empty() ? "" : ", ") + k; };
  for (const auto& [k, v] : a.items())
    if (!b.contains(k) || b[k] != v) add(k);
  for (const auto& [k, v] : b.items())
    if (!a.contains(k)) add(k);
  return out;
}

}  // namespace

nlohmann::json identity_of(const records::Record& r) {
  nlohmann::json suites = nlohmann::json::object();
  for (const auto& [name, s] : r.suites) suites[name] = s.config;
  return {{"model", {{"path", r.model.path}, {"format", r.model.format}, {"sha256", r.model.sha256}}}, {"suites", suites}};
}

void check_model_identity(const Baseline& b, const records::ModelInfo& model, const std::string& baseline_file) {
  if (!b.identity.is_object() || !b.identity.contains("model")) return;
  const auto& m = b.identity["model"];
  const std::string sha = m.value("sha256", ""), format = m.value("format", ""), path = m.value("path", "");
  const bool sha_differs = !sha.empty() && !model.sha256.empty() && sha != model.sha256;
  const bool format_differs = !format.empty() && !model.format.empty() && format != model.format;
  if (!sha_differs && !format_differs) return;
  throw GateError("the gate compares like with like: this run's model is " +
                  model_text(model.path, model.format, model.sha256) + " but the baseline " + baseline_file +
                  " was made with " + model_text(path, format, sha) +
                  (format_differs ? "; a " + model.format + " run cannot be judged against a " + format + " baseline" : "") +
                  ". Run with --model set to the baseline's model, or give this model its own baseline "
                  "(--baselines-dir or --machine-class, then `baseline init`)");
}

std::vector<std::string> unpinned_suites(const Baseline& b) {
  const bool has = b.identity.is_object() && b.identity.contains("suites") && b.identity["suites"].is_object();
  std::set<std::string> out;
  for (const auto& [key, m] : b.metrics) {
    const std::string suite = key.substr(0, key.find('/'));
    if (!has || !b.identity["suites"].contains(suite)) out.insert(suite);
  }
  return {out.begin(), out.end()};
}

void check_suite_identity(const Baseline& b, const records::Record& r, const std::string& baseline_file) {
  if (!b.identity.is_object() || !b.identity.contains("suites")) return;
  const auto& suites = b.identity["suites"];
  for (const auto& [name, s] : r.suites) {
    if (!suites.contains(name)) continue;
    const auto& want = suites[name];
    if (want == s.config) continue;
    std::string hint = "; `baseline accept --suite " + name + " --reason ...` adopts the new config";
    if (name == "instructions" && want.is_object() && s.config.is_object() &&
        want.value("counted_on", nlohmann::json()) != s.config.value("counted_on", nlohmann::json())) {
      hint = "; instruction counts are comparable only on the same CPU and valgrind (counted_on): run on the "
             "baseline's machine class, or give this CPU its own baseline with --machine-class";
    }
    throw GateError("suite " + name + " ran with a config that differs from the baseline " + baseline_file +
                    " in " + differing_keys(want, s.config) + ": record " + shown(s.config) + ", baseline " +
                    shown(want) + hint);
  }
}

}  // namespace atlas::gates
