#include "gates/counted_vs_base.hpp"

#include "gates/error.hpp"
#include "gates/ratchet.hpp"

namespace atlas::gates {
namespace {

records::Record only_suite(const records::Record& r, const std::string& suite) {
  records::Record out = r;
  out.suites.clear();
  if (const auto it = r.suites.find(suite); it != r.suites.end()) out.suites.emplace(suite, it->second);
  return out;
}

nlohmann::json counted_on_of(const records::Record& r, const std::string& suite) {
  const auto it = r.suites.find(suite);
  if (it == r.suites.end() || !it->second.config.is_object()) return nullptr;
  return it->second.config.value("counted_on", nlohmann::json());
}

}  // namespace

std::string counted_on_text(const nlohmann::json& suite_config) {
  if (!suite_config.is_object() || !suite_config.contains("counted_on") || !suite_config["counted_on"].is_object()) return "unknown";
  const auto& c = suite_config["counted_on"];
  const std::string flags = c.value("cpu_flags_sha256", "");
  return c.value("cpu_model", "?") + ", flags sha256 " + flags.substr(0, 12) + ", " + c.value("valgrind", "?");
}

Comparison compare_counted_with_base(const records::Record& head, const records::Record& base, const GateConfig& cfg,
                                     const std::string& base_commit, const std::string& suite) {
  if (!base.suites.count(suite)) throw GateError("the merge-base's record has no " + suite + " suite");
  if (counted_on_of(head, suite) != counted_on_of(base, suite)) {
    throw GateError("the merge-base's " + suite + " counts were made on " + counted_on_text(base.suites.at(suite).config) +
                    ", the head's on " + counted_on_text(head.suites.count(suite) ? head.suites.at(suite).config : nlohmann::json()) +
                    ": they cannot be compared");
  }
  // The base side never runs the head's planted test hooks, so init_baseline accepts its record.
  const Baseline b = init_baseline(only_suite(base, suite), cfg, base.machine.machine_class, ChangeStamp{base_commit, base.start_utc}, "merge-base");
  Comparison c = compare(b, only_suite(head, suite), compare_settings(cfg));
  const std::string tag = "vs merge-base " + base_commit.substr(0, 12) + ": ";
  for (auto& v : c.verdicts) v.why = tag + v.why;
  return c;
}

bool stored_counts_match(const Baseline& stored, const records::Record& head, const std::string& suite) {
  if (!stored.identity.is_object() || !stored.identity.contains("suites") || !stored.identity["suites"].contains(suite)) return false;
  const auto it = head.suites.find(suite);
  return it != head.suites.end() && stored.identity["suites"][suite] == it->second.config;
}

Baseline without_suite(Baseline b, const std::string& suite) {
  const std::string prefix = suite + "/";
  std::erase_if(b.metrics, [&](const auto& kv) { return kv.first.rfind(prefix, 0) == 0; });
  if (b.identity.is_object() && b.identity.contains("suites") && b.identity["suites"].is_object()) b.identity["suites"].erase(suite);
  return b;
}

}  // namespace atlas::gates
