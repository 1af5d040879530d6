#include "gates/json_fields.hpp"

#include <cctype>
#include <cmath>

#include "gates/error.hpp"

namespace atlas::gates {
namespace {

bool is_identifier(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) return false;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

std::string short_dump(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 80) {
    s.resize(77);
    s.append("...");
  }
  return s;
}

}  // namespace

std::string FieldReader::child(std::string_view path, std::string_view key) {
  std::string out(path);
  if (is_identifier(key)) {
    if (!out.empty()) out += '.';
    out += key;
  } else {
    out.append("[");
    out.append(nlohmann::json(std::string(key)).dump());
    out.append("]");
  }
  return out;
}

std::string FieldReader::index(std::string_view path, std::size_t i) {
  return std::string(path) + "[" + std::to_string(i) + "]";
}

void FieldReader::fail(std::string_view path, std::string_view problem, const nlohmann::json& value) const {
  throw GateError(source_ + ": field " + (path.empty() ? std::string("(root)") : std::string(path)) + ": " +
                  std::string(problem) + " (value: " + short_dump(value) + ")");
}

const nlohmann::json& FieldReader::member(const nlohmann::json& parent, std::string_view path, std::string_view key) const {
  if (!parent.is_object()) fail(path, "expected an object", parent);
  const auto it = parent.find(std::string(key));
  if (it == parent.end()) fail(child(path, key), "missing", nullptr);
  return *it;
}

const nlohmann::json& FieldReader::object(const nlohmann::json& parent, std::string_view path, std::string_view key) const {
  const auto& v = member(parent, path, key);
  if (!v.is_object()) fail(child(path, key), "expected an object", v);
  return v;
}

const nlohmann::json& FieldReader::array(const nlohmann::json& parent, std::string_view path, std::string_view key) const {
  const auto& v = member(parent, path, key);
  if (!v.is_array()) fail(child(path, key), "expected an array", v);
  return v;
}

std::string FieldReader::string(const nlohmann::json& parent, std::string_view path, std::string_view key) const {
  const auto& v = member(parent, path, key);
  if (!v.is_string()) fail(child(path, key), "expected a string", v);
  return v.get<std::string>();
}

std::optional<std::string> FieldReader::optional_string(const nlohmann::json& parent, std::string_view path,
                                                        std::string_view key) const {
  if (!parent.is_object() || !parent.contains(std::string(key))) return std::nullopt;
  return string(parent, path, key);
}

double FieldReader::number(const nlohmann::json& parent, std::string_view path, std::string_view key) const {
  const auto& v = member(parent, path, key);
  if (!v.is_number()) fail(child(path, key), "expected a number", v);
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(child(path, key), "expected a finite number", v);
  return d;
}

std::optional<double> FieldReader::optional_number(const nlohmann::json& parent, std::string_view path,
                                                   std::string_view key) const {
  if (!parent.is_object() || !parent.contains(std::string(key))) return std::nullopt;
  return number(parent, path, key);
}

std::optional<double> FieldReader::number_or_null(const nlohmann::json& parent, std::string_view path,
                                                  std::string_view key) const {
  const auto& v = member(parent, path, key);
  if (v.is_null()) return std::nullopt;
  return number(parent, path, key);
}

long long FieldReader::integer(const nlohmann::json& parent, std::string_view path, std::string_view key) const {
  const auto& v = member(parent, path, key);
  if (!v.is_number_integer()) fail(child(path, key), "expected an integer", v);
  return v.get<long long>();
}

bool FieldReader::boolean(const nlohmann::json& parent, std::string_view path, std::string_view key) const {
  const auto& v = member(parent, path, key);
  if (!v.is_boolean()) fail(child(path, key), "expected true or false", v);
  return v.get<bool>();
}

std::optional<bool> FieldReader::optional_boolean(const nlohmann::json& parent, std::string_view path,
                                                  std::string_view key) const {
  if (!parent.is_object() || !parent.contains(std::string(key))) return std::nullopt;
  return boolean(parent, path, key);
}

std::vector<double> FieldReader::numbers(const nlohmann::json& parent, std::string_view path, std::string_view key) const {
  const auto& arr = array(parent, path, key);
  std::vector<double> out;
  out.reserve(arr.size());
  const std::string p = child(path, key);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_number()) fail(index(p, i), "expected a number", arr[i]);
    const double d = arr[i].get<double>();
    if (!std::isfinite(d)) fail(index(p, i), "expected a finite number", arr[i]);
    out.push_back(d);
  }
  return out;
}

std::string FieldReader::one_of(const nlohmann::json& parent, std::string_view path, std::string_view key,
                                const std::vector<std::string>& allowed) const {
  const std::string s = string(parent, path, key);
  for (const auto& a : allowed) {
    if (a == s) return s;
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  fail(child(path, key), "expected one of " + list, s);
}

}  // namespace atlas::gates
