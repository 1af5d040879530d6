#pragma once
// Field-by-field JSON validation for gate inputs (BASELINE files, gate configs). Every getter
// throws GateError "<source>: field <path>: <problem> (value: <json>)", so a bad file is named
// with the exact field and value that made it unreadable.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace atlas::gates {

class FieldReader {
 public:
  /// `source` names the input in messages (usually the file path).
  explicit FieldReader(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }

  /// Path of a child: child("metrics", "ttft/p50") -> metrics["ttft/p50"]; keys that are plain
  /// identifiers use dots: child("a", "b") -> a.b.
  static std::string child(std::string_view path, std::string_view key);
  static std::string index(std::string_view path, std::size_t i);

  [[noreturn]] void fail(std::string_view path, std::string_view problem, const nlohmann::json& value) const;

  const nlohmann::json& object(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  const nlohmann::json& array(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  /// Optional members return nullopt when the key is absent (present-but-wrong-type throws).
  std::string string(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  std::optional<std::string> optional_string(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  /// Finite number.
  double number(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  std::optional<double> optional_number(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  /// Finite number or null (null -> nullopt); the key must be present.
  std::optional<double> number_or_null(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  long long integer(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  bool boolean(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  std::optional<bool> optional_boolean(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  /// Array of finite numbers.
  std::vector<double> numbers(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  /// One of `allowed`.
  std::string one_of(const nlohmann::json& parent, std::string_view path, std::string_view key,
                     const std::vector<std::string>& allowed) const;

 private:
  const nlohmann::json& member(const nlohmann::json& parent, std::string_view path, std::string_view key) const;
  std::string source_;
};

}  // namespace atlas::gates
