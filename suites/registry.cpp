#include "suites/registry.hpp"

#include <algorithm>

#include "suites/agentic/agentic_suite.hpp"
#include "suites/bfcl/bfcl_suite.hpp"
#include "suites/decode_anatomy/decode_anatomy_suite.hpp"
#include "suites/error.hpp"
#include "suites/ttft/ttft_suite.hpp"

namespace atlas::suites {

namespace {
// BFCL is accuracy: greedy and deterministic, so warmup/repetitions do not apply; its section
// holds bfcl_config_from_json's fields.
records::SuiteResult run_bfcl(Target& target, const SuiteOptions& options) {
  nlohmann::json section = options.config;
  section.erase("warmup");
  section.erase("repetitions");
  const bfcl::BfclSuiteConfig cfg = bfcl::bfcl_config_from_json(section, options.config_source);
  if (options.data_dir.empty()) throw SuiteError("bfcl: no data directory given (it reads <data-dir>/bfcl)");
  Progress& progress = options.progress_or_null();
  progress.begin("bfcl", 0);
  records::SuiteResult r = bfcl::run_bfcl_suite(target, cfg, options.data_dir);
  const auto overall = r.metrics.find("accuracy.overall");
  progress.end(overall == r.metrics.end() ? "" : std::to_string(overall->second.samples.size()) + " entries scored");
  return r;
}
}  // namespace

const std::vector<SuiteInfo>& suite_registry() {
  static const std::vector<SuiteInfo> registry{
      {"ttft", "time to first token over prompt lengths, cold and warm; TPOT and ITL of a short decode", run_ttft_suite},
      {"agentic", "multi-turn tool-use sessions from traces: per-turn TTFT and prefix reuse", run_agentic_suite},
      {"decode-anatomy", "per-token decode time split by stage, with counters and an output fingerprint",
       run_decode_anatomy_suite},
      {"bfcl", "function-calling accuracy on a BFCL subset (AST checker), with decode speed", run_bfcl},
  };
  return registry;
}

const SuiteInfo& find_suite(std::string_view name) {
  for (const auto& s : suite_registry()) {
    if (s.name == name) return s;
  }
  std::string known;
  for (const auto& s : suite_registry()) known += (known.empty() ? "" : ", ") + s.name;
  throw SuiteError("unknown suite '" + std::string(name) + "' (known: " + known + ", all)");
}

std::vector<std::string> expand_suite_names(std::string_view spec) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t comma = spec.find(',', pos);
    const std::string_view item = spec.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (item == "all") {
      for (const auto& s : suite_registry()) out.push_back(s.name);
    } else if (!item.empty()) {
      out.push_back(find_suite(item).name);
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  std::vector<std::string> unique;
  for (auto& n : out) {
    if (std::find(unique.begin(), unique.end(), n) == unique.end()) unique.push_back(n);
  }
  if (unique.empty()) throw SuiteError("no suite named in '" + std::string(spec) + "'");
  return unique;
}

}  // namespace atlas::suites
