#pragma once
// Suite-set configurations: suites/config/pr.json (the fast pull-request gate) and nightly.json
// (full runs), or any file of the same shape:
//   {"name": "pr", "description": "...", "seed": 1,
//    "suites": {"ttft": {"warmup": 1, "repetitions": 3, ...suite options...}, ...}}
// Each suite's section is passed to it as SuiteOptions::config; warmup and repetitions are read
// here. The options every suite accepts are documented in docs/metrics.md.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace atlas::suites {

struct SuiteSetConfig {
  std::string name;                 ///< "pr", "nightly", or the file's "name"
  std::string source;               ///< the file it came from
  std::string description;
  std::uint64_t seed = 1;
  nlohmann::json suites = nlohmann::json::object();  ///< suite name -> section

  /// The section of `suite`, or an empty object when the file has none.
  const nlohmann::json& section(std::string_view suite) const;
};

/// "pr" / "nightly" (suites/config/<name>.json) or a path to such a file. Throws SuiteError
/// naming the file and the field on a bad file.
SuiteSetConfig load_suite_set_config(std::string_view name_or_path);
SuiteSetConfig parse_suite_set_config(const nlohmann::json& j, const std::string& source);

}  // namespace atlas::suites
