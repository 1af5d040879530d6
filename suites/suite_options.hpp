#pragma once
// What every suite run takes: warmup and repetition counts, the seed that fixes every synthetic
// input, the suite's own configuration section, and where to report progress.
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/progress.hpp"

namespace atlas::suites {

struct SuiteOptions {
  int warmup = 1;            ///< unmeasured repetitions before measuring
  int repetitions = 3;       ///< measured repetitions (each adds one sample per metric, or more)
  std::uint64_t seed = 1;    ///< synthetic prompts/fillers derive from it
  nlohmann::json config = nlohmann::json::object();  ///< the suite's section of the config file
  std::string config_source = "<defaults>";  ///< "suites/config/pr.json: suites.ttft", for errors
  Progress* progress = nullptr;              ///< null: silent
  std::filesystem::path data_dir;            ///< data directory (models/, bfcl/) for suites with data

  Progress& progress_or_null() const;
};

/// Typed access to a config section with errors that name the source, the field and the value.
class ConfigSection {
 public:
  ConfigSection(const nlohmann::json& j, std::string source);
  /// Throws SuiteError when the section holds a key not in `allowed` (catches typos).
  void allow_only(std::initializer_list<std::string_view> allowed) const;
  int get_int(std::string_view field, int def, int min_value) const;
  double get_double(std::string_view field, double def, double min_value) const;
  bool get_bool(std::string_view field, bool def) const;
  std::string get_string(std::string_view field, const std::string& def) const;
  std::vector<int> get_int_list(std::string_view field, const std::vector<int>& def, int min_value) const;
  std::vector<std::string> get_string_list(std::string_view field, const std::vector<std::string>& def) const;
  const std::string& source() const { return source_; }

 private:
  [[noreturn]] void bad(std::string_view field, const std::string& why) const;
  const nlohmann::json* j_;
  std::string source_;
};

}  // namespace atlas::suites
