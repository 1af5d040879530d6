#pragma once
// The suites atlas-bench knows, by name. One explicit list (registry.cpp) rather than static
// registrars, which a static library's linker would silently drop.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "records/metric.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

using SuiteRunFn = std::function<records::SuiteResult(Target&, const SuiteOptions&)>;

using SuiteCheckFn = std::function<void(const SuiteOptions&)>;

struct SuiteInfo {
  std::string name;         ///< "ttft", "agentic", "decode-anatomy", "bfcl"
  std::string description;
  SuiteRunFn run;
  /// Parses the suite's config section (and the files it names) and throws SuiteError naming
  /// the field, without running anything: run_suite_set checks every suite before the first runs.
  SuiteCheckFn check;
  /// Part of "all". Not: load (needs a server) and instructions (runs a child under valgrind
  /// and needs the atlas-bench executable; it runs when named and in the pr gate).
  bool in_all = true;
};

/// Every suite, in the order "all" runs them.
const std::vector<SuiteInfo>& suite_registry();
/// Throws SuiteError listing the known names when `name` is not one.
const SuiteInfo& find_suite(std::string_view name);
/// "all" -> every suite with in_all; "ttft,agentic" -> those two (order kept, duplicates dropped).
std::vector<std::string> expand_suite_names(std::string_view spec);

}  // namespace atlas::suites
