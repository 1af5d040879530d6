#include "suites/suite_config.hpp"

#include "common/json_file.hpp"
#include "suites/error.hpp"
#include "suites/resources.hpp"

namespace atlas::suites {

const nlohmann::json& SuiteSetConfig::section(std::string_view suite) const {
  static const nlohmann::json empty = nlohmann::json::object();
  auto it = suites.find(std::string(suite));
  return it == suites.end() ? empty : *it;
}

SuiteSetConfig parse_suite_set_config(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw SuiteError(source + ": expected a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "name" && key != "description" && key != "seed" && key != "suites") {
      throw SuiteError(source + ": field '" + key + "' is not a suite-config field (name, description, seed, suites)");
    }
  }
  SuiteSetConfig c;
  c.source = source;
  if (!j.contains("name") || !j["name"].is_string()) throw SuiteError(source + ": field 'name' must be a string");
  c.name = j["name"].get<std::string>();
  if (j.contains("description")) {
    // json::value() would throw nlohmann's untyped type_error for a non-string (found by fuzz_suite_config).
    if (!j["description"].is_string())
      throw SuiteError(source + ": field 'description' must be a string, got " + j["description"].dump());
    c.description = j["description"].get<std::string>();
  }
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned()) throw SuiteError(source + ": field 'seed' must be an integer >= 0, got " + j["seed"].dump());
    c.seed = j["seed"].get<std::uint64_t>();
  }
  if (!j.contains("suites") || !j["suites"].is_object()) throw SuiteError(source + ": field 'suites' must be an object");
  for (const auto& [name, section] : j["suites"].items()) {
    if (!section.is_object()) throw SuiteError(source + ": field 'suites." + name + "' must be an object, got " + section.dump());
  }
  c.suites = j["suites"];
  return c;
}

SuiteSetConfig load_suite_set_config(std::string_view name_or_path) {
  const auto path = resolve_resource(name_or_path, "config");
  return parse_suite_set_config(atlas::read_json_file(path), path.string());
}

}  // namespace atlas::suites
