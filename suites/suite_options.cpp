#include "suites/suite_options.hpp"

#include <algorithm>

#include "suites/error.hpp"

namespace atlas::suites {

Progress& SuiteOptions::progress_or_null() const {
  static NullProgress null;
  return progress ? *progress : null;
}

ConfigSection::ConfigSection(const nlohmann::json& j, std::string source) : j_(&j), source_(std::move(source)) {
  if (!j.is_object()) throw SuiteError(source_ + ": expected a JSON object, got " + j.dump());
}

void ConfigSection::bad(std::string_view field, const std::string& why) const {
  throw SuiteError(source_ + ": field '" + std::string(field) + "' " + why);
}

void ConfigSection::allow_only(std::initializer_list<std::string_view> allowed) const {
  for (const auto& [key, value] : j_->items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) bad(key, "is not a known option");
  }
}

int ConfigSection::get_int(std::string_view field, int def, int min_value) const {
  auto it = j_->find(std::string(field));
  if (it == j_->end()) return def;
  if (!it->is_number_integer()) bad(field, "must be an integer, got " + it->dump());
  const auto v = it->get<long long>();
  if (v < min_value || v > 1'000'000'000) bad(field, "must be >= " + std::to_string(min_value) + ", got " + it->dump());
  return static_cast<int>(v);
}

double ConfigSection::get_double(std::string_view field, double def, double min_value) const {
  auto it = j_->find(std::string(field));
  if (it == j_->end()) return def;
  if (!it->is_number()) bad(field, "must be a number, got " + it->dump());
  const double v = it->get<double>();
  if (v < min_value) bad(field, "must be >= " + std::to_string(min_value) + ", got " + it->dump());
  return v;
}

bool ConfigSection::get_bool(std::string_view field, bool def) const {
  auto it = j_->find(std::string(field));
  if (it == j_->end()) return def;
  if (!it->is_boolean()) bad(field, "must be true or false, got " + it->dump());
  return it->get<bool>();
}

std::string ConfigSection::get_string(std::string_view field, const std::string& def) const {
  auto it = j_->find(std::string(field));
  if (it == j_->end()) return def;
  if (!it->is_string()) bad(field, "must be a string, got " + it->dump());
  return it->get<std::string>();
}

std::vector<int> ConfigSection::get_int_list(std::string_view field, const std::vector<int>& def, int min_value) const {
  auto it = j_->find(std::string(field));
  if (it == j_->end()) return def;
  if (!it->is_array() || it->empty()) bad(field, "must be a non-empty array of integers, got " + it->dump());
  std::vector<int> out;
  for (const auto& e : *it) {
    if (!e.is_number_integer() || e.get<long long>() < min_value) {
      bad(field, "must hold integers >= " + std::to_string(min_value) + ", got " + e.dump());
    }
    out.push_back(e.get<int>());
  }
  return out;
}

std::vector<std::string> ConfigSection::get_string_list(std::string_view field, const std::vector<std::string>& def) const {
  auto it = j_->find(std::string(field));
  if (it == j_->end()) return def;
  if (!it->is_array()) bad(field, "must be an array of strings, got " + it->dump());
  std::vector<std::string> out;
  for (const auto& e : *it) {
    if (!e.is_string()) bad(field, "must hold strings, got " + e.dump());
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace atlas::suites
