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

struct SuiteInfo {
  std::string name;         ///< "ttft", "agentic", "decode-anatomy", "bfcl"
  std::string description;
  SuiteRunFn run;
};

/// Every suite, in the order "all" runs them.
const std::vector<SuiteInfo>& suite_registry();
/// Throws SuiteError listing the known names when `name` is not one.
const SuiteInfo& find_suite(std::string_view name);
/// "all" -> every suite; "ttft,agentic" -> those two (order kept, duplicates dropped).
std::vector<std::string> expand_suite_names(std::string_view spec);

}  // namespace atlas::suites
