#include "suites/registry.hpp"

#include <algorithm>

#include "suites/agentic/agentic_suite.hpp"
#include "suites/bfcl/bfcl_suite.hpp"
#include "suites/decode_anatomy/decode_anatomy_suite.hpp"
#include "suites/endpoint/load_suite.hpp"
#include "suites/error.hpp"
#include "suites/instructions/instructions_suite.hpp"
#include "suites/ttft/ttft_suite.hpp"

namespace atlas::suites {

const std::vector<SuiteInfo>& suite_registry() {
  static const std::vector<SuiteInfo> registry{
      {"ttft", "time to first token over prompt lengths, cold and warm; TPOT and ITL of a short decode", run_ttft_suite,
       [](const SuiteOptions& o) { (void)TtftConfig::from(o); }},
      {"agentic", "multi-turn tool-use sessions from traces: per-turn TTFT and prefix reuse", run_agentic_suite,
       [](const SuiteOptions& o) { (void)AgenticConfig::from(o); }},
      {"decode-anatomy", "per-token decode time split by stage, with counters and an output fingerprint",
       run_decode_anatomy_suite, [](const SuiteOptions& o) { (void)DecodeAnatomyConfig::from(o); }},
      {"bfcl", "BFCL subset: function-calling accuracy scored as BFCL's AST checker, decode tok/s, time per entry",
       [](Target& target, const SuiteOptions& options) { return bfcl::run_bfcl_suite(target, options); },
       [](const SuiteOptions& o) { (void)bfcl::bfcl_suite_setup(o); }},
      {"load", "serving load against an endpoint: concurrency or request-rate sweep, TTFT/TPOT/ITL/E2E, throughput, goodput",
       run_load_suite, [](const SuiteOptions& o) { (void)LoadSuiteConfig::from(o); }, false},
      {"instructions", "instructions and simulated cache misses per prefill and decode token, counted under callgrind",
       run_instructions_suite, [](const SuiteOptions& o) { (void)InstructionsConfig::from(o); }, false},
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
      // "load" needs a server and its own options (run --concurrency/--rate), "instructions" a
      // child under valgrind: named only (in_all false).
      for (const auto& s : suite_registry())
        if (s.in_all) out.push_back(s.name);
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
