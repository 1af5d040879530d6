// records/record.schema.json must describe exactly what record_io writes. A small validator for
// the JSON Schema (draft 2020-12) keywords the schema uses checks written records against it.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/json_file.hpp"
#include "records/merge.hpp"
#include "records/record_io.hpp"
#include "tests/records/fixture.hpp"
#include "tests/test_data.hpp"

using nlohmann::json;

namespace {

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  return false;
}

// Appends "<pointer>: <problem>" for every violation of `schema` by `v`.
void validate(const json& root, const json& schema, const json& v, const std::string& at, std::vector<std::string>& errs) {
  static const std::vector<std::string> kKnown{"$schema", "$id", "title", "description", "type", "required",
                                               "properties", "additionalProperties", "items", "enum", "const",
                                               "$ref", "minimum", "minLength", "pattern", "$defs"};
  for (const auto& [k, _] : schema.items()) {
    if (std::find(kKnown.begin(), kKnown.end(), k) == kKnown.end()) errs.push_back(at + ": schema keyword not checked: " + k);
  }
  if (schema.contains("$ref")) {
    const std::string ref = schema["$ref"];
    REQUIRE(ref.rfind("#/$defs/", 0) == 0);
    validate(root, root["$defs"][ref.substr(8)], v, at, errs);
  }
  if (schema.contains("type")) {
    const json& t = schema["type"];
    bool ok = false;
    if (t.is_string()) ok = has_type(v, t);
    else
      for (const auto& one : t) ok = ok || has_type(v, one);
    if (!ok) {
      errs.push_back(at + ": type " + t.dump() + " expected, got " + v.dump());
      return;
    }
  }
  if (schema.contains("const") && v != schema["const"]) errs.push_back(at + ": const " + schema["const"].dump());
  if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end()) {
    errs.push_back(at + ": not in enum: " + v.dump());
  }
  if (schema.contains("minimum") && v.is_number() && v.get<double>() < schema["minimum"].get<double>()) {
    errs.push_back(at + ": below minimum");
  }
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (schema.contains("minLength") && s.size() < schema["minLength"].get<std::size_t>()) errs.push_back(at + ": too short");
    if (schema.contains("pattern") && !std::regex_search(s, std::regex(schema["pattern"].get<std::string>()))) {
      errs.push_back(at + ": does not match pattern: " + s);
    }
  }
  if (v.is_object()) {
    if (schema.contains("required")) {
      for (const auto& k : schema["required"]) {
        if (!v.contains(k.get<std::string>())) errs.push_back(at + ": missing required " + k.get<std::string>());
      }
    }
    for (const auto& [k, child] : v.items()) {
      if (schema.contains("properties") && schema["properties"].contains(k)) {
        validate(root, schema["properties"][k], child, at + "/" + k, errs);
      } else if (schema.contains("additionalProperties")) {
        validate(root, schema["additionalProperties"], child, at + "/" + k, errs);
      }
    }
  }
  if (v.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < v.size(); ++i) validate(root, schema["items"], v[i], at + "/" + std::to_string(i), errs);
  }
}

std::vector<std::string> check(const json& record) {
  static const json schema = atlas::read_json_file(atlas::test::source_dir() / "records" / "record.schema.json");
  std::vector<std::string> errs;
  validate(schema, schema, record, "", errs);
  return errs;
}

}  // namespace

TEST_CASE("written records validate against records/record.schema.json") {
  const json full = atlas::records::to_json(atlas::test::sample_record());
  CHECK(check(full) == std::vector<std::string>{});
  // Every top-level key the writer emits is declared in the schema (no undocumented fields).
  const json schema = atlas::read_json_file(atlas::test::source_dir() / "records" / "record.schema.json");
  for (const auto& [k, _] : full.items()) CHECK_MESSAGE(schema["properties"].contains(k), k);

  auto empty = atlas::test::sample_record();
  empty.suites["ttft"].metrics["ttft_ms"].samples.clear();
  empty.endpoint = {{"url", "http://127.0.0.1:8000/v1"}};
  CHECK(check(atlas::records::to_json(empty)) == std::vector<std::string>{});

  std::vector<atlas::records::Record> shards{atlas::test::sample_record(), atlas::test::sample_record()};
  shards[1].run_id = "20261129T143320Z-ba9876543210";  // merge refuses one run given twice
  CHECK(check(atlas::records::to_json(atlas::records::merge_records(shards))) == std::vector<std::string>{});
}

TEST_CASE("the schema rejects what the reader rejects") {
  json j = atlas::records::to_json(atlas::test::sample_record());
  j["suites"]["ttft"]["metrics"]["ttft_ms"]["better"] = "faster";
  j["machine"]["cores"] = "two";
  j.erase("valid");
  const auto errs = check(j);
  REQUIRE(errs.size() == 3);
  CHECK(errs[0] == ": missing required valid");
  CHECK(errs[1].rfind("/machine/cores: type", 0) == 0);
  CHECK(errs[2] == "/suites/ttft/metrics/ttft_ms/better: not in enum: \"faster\"");
}
