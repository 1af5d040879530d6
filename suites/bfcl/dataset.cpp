#include "suites/bfcl/dataset.hpp"

#include <fstream>
#include <set>

#include "suites/bfcl/bfcl_error.hpp"

namespace atlas::suites::bfcl {

const std::vector<std::string>& all_categories() {
  static const std::vector<std::string> c = {
      "simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance",
      "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance",
      "live_relevance"};
  return c;
}

bool is_relevance_category(std::string_view category) {
  return category.find("relevance") != std::string_view::npos;  // covers "irrelevance"
}

std::string category_of_id(std::string_view id) {
  const auto pos = id.rfind('_');
  return std::string(pos == std::string_view::npos ? id : id.substr(0, pos));
}

const ParamSchema* FunctionSchema::find(std::string_view param) const {
  for (const auto& [name, schema] : properties) {
    if (name == param) return &schema;
  }
  return nullptr;
}

const std::vector<PyValue>* GroundTruthCall::find(std::string_view param) const {
  for (const auto& [name, values] : params) {
    if (name == param) return &values;
  }
  return nullptr;
}

const BfclEntry* BfclDataset::find(std::string_view id) const {
  const auto it = by_id.find(std::string(id));
  return it == by_id.end() ? nullptr : &entries[it->second];
}

std::size_t BfclDataset::count(std::string_view category) const {
  std::size_t n = 0;
  for (const auto& e : entries) n += e.category == category ? 1 : 0;
  return n;
}

namespace {

using ojson = nlohmann::ordered_json;

[[noreturn]] void bad(const std::string& where, const std::string& what) { throw BfclError(where + ": " + what); }

ojson parse_json_line(std::string_view line, const std::string& where) {
  try {
    return ojson::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    bad(where, std::string("malformed JSON (") + e.what() + ")");
  }
}

const std::set<std::string>& known_types() {
  static const std::set<std::string> t = {"string", "integer", "float", "boolean", "array", "tuple", "dict", "any"};
  return t;
}

FunctionSchema parse_function(const ojson& f, const std::string& where, std::size_t index) {
  const std::string field = "function[" + std::to_string(index) + "]";
  if (!f.is_object()) bad(where, field + " is not an object");
  if (!f.contains("name") || !f["name"].is_string()) bad(where, field + ".name is missing or not a string");
  FunctionSchema s;
  s.name = f["name"].get<std::string>();
  s.raw = f;
  const std::string pfield = field + " (" + s.name + ").parameters";
  if (!f.contains("parameters") || !f["parameters"].is_object()) bad(where, pfield + " is missing or not an object");
  const ojson& p = f["parameters"];
  if (!p.contains("properties") || !p["properties"].is_object()) bad(where, pfield + ".properties is missing or not an object");
  // Upstream reads parameters["required"] unconditionally; every v4 schema has it. A missing
  // list is read as "nothing required" rather than failing the whole file.
  if (p.contains("required")) {
    if (!p["required"].is_array()) bad(where, pfield + ".required is not a list");
    for (const auto& r : p["required"]) {
      if (!r.is_string()) bad(where, pfield + ".required holds a non-string: " + r.dump());
      s.required.push_back(r.get<std::string>());
    }
  }
  for (const auto& [name, prop] : p["properties"].items()) {
    const std::string qfield = pfield + ".properties." + name;
    if (!prop.is_object() || !prop.contains("type") || !prop["type"].is_string()) {
      bad(where, qfield + ".type is missing or not a string");
    }
    ParamSchema ps;
    ps.type = prop["type"].get<std::string>();
    if (!known_types().count(ps.type)) bad(where, qfield + ".type '" + ps.type + "' is not a BFCL Python type");
    if (ps.type == "array" || ps.type == "tuple") {
      if (!prop.contains("items") || !prop["items"].is_object() || !prop["items"].contains("type") ||
          !prop["items"]["type"].is_string()) {
        bad(where, qfield + ".items.type is missing (required for " + ps.type + ")");
      }
      ps.item_type = prop["items"]["type"].get<std::string>();
      if (!known_types().count(ps.item_type)) bad(where, qfield + ".items.type '" + ps.item_type + "' is not a BFCL Python type");
    }
    s.properties.emplace_back(name, std::move(ps));
  }
  return s;
}

std::vector<std::string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BfclError(path.string() + ": cannot open for reading");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  // A final newline is optional (upstream files have none); trailing blank lines are ignored.
  while (!lines.empty() && lines.back().find_first_not_of(" \t") == std::string::npos) lines.pop_back();
  return lines;
}

}  // namespace

BfclEntry parse_question_line(std::string_view line, const std::string& where) {
  const ojson j = parse_json_line(line, where);
  if (!j.is_object()) bad(where, "a line must be a JSON object");
  if (!j.contains("id") || !j["id"].is_string()) bad(where, "field 'id' is missing or not a string");
  BfclEntry e;
  e.id = j["id"].get<std::string>();
  e.category = category_of_id(e.id);
  e.source = where;
  if (!j.contains("question") || !j["question"].is_array() || j["question"].empty()) {
    bad(where, "field 'question' of " + e.id + " must be a non-empty list of turns");
  }
  for (const auto& turn : j["question"]) {
    if (!turn.is_array()) bad(where, "field 'question' of " + e.id + ": a turn is not a list of messages");
    for (const auto& m : turn) {
      if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content") ||
          !m["content"].is_string()) {
        bad(where, "field 'question' of " + e.id + ": a message lacks string 'role'/'content': " + m.dump());
      }
    }
  }
  e.question = j["question"];
  if (!j.contains("function") || !j["function"].is_array()) bad(where, "field 'function' of " + e.id + " is missing or not a list");
  std::size_t index = 0;
  for (const auto& f : j["function"]) e.functions.push_back(parse_function(f, where + " (" + e.id + ")", index++));
  return e;
}

std::vector<GroundTruthCall> parse_answer_line(std::string_view line, const std::string& where, std::string* id) {
  const ojson j = parse_json_line(line, where);
  if (!j.is_object()) bad(where, "a line must be a JSON object");
  if (!j.contains("id") || !j["id"].is_string()) bad(where, "field 'id' is missing or not a string");
  if (id) *id = j["id"].get<std::string>();
  if (!j.contains("ground_truth") || !j["ground_truth"].is_array()) bad(where, "field 'ground_truth' is missing or not a list");
  std::vector<GroundTruthCall> calls;
  for (const auto& c : j["ground_truth"]) {
    if (!c.is_object() || c.size() != 1) bad(where, "a ground_truth call must be an object with exactly one key: " + c.dump());
    GroundTruthCall g;
    g.name = c.begin().key();
    const ojson& params = c.begin().value();
    if (!params.is_object()) bad(where, "ground_truth call " + g.name + ": the parameters are not an object");
    for (const auto& [p, values] : params.items()) {
      if (!values.is_array()) bad(where, "ground_truth " + g.name + "." + p + ": acceptable values must be a list");
      std::vector<PyValue> acceptable;
      for (const auto& v : values) acceptable.push_back(from_json(v));
      g.params.emplace_back(p, std::move(acceptable));
    }
    calls.push_back(std::move(g));
  }
  return calls;
}

BfclDataset load_bfcl_dataset(const std::filesystem::path& data_dir, const std::vector<std::string>& categories) {
  const auto dir = data_dir / "bfcl";
  std::vector<std::string> wanted = categories;
  if (wanted.empty()) {
    for (const auto& c : all_categories()) {
      if (std::filesystem::exists(dir / ("BFCL_v4_" + c + ".json"))) wanted.push_back(c);
    }
    if (wanted.empty()) throw BfclError(dir.string() + ": no BFCL_v4_<category>.json question files");
  }
  BfclDataset ds;
  for (const auto& cat : wanted) {
    const auto qpath = dir / ("BFCL_v4_" + cat + ".json");
    if (!std::filesystem::exists(qpath)) throw BfclError(qpath.string() + ": question file for category '" + cat + "' not found");
    const auto qlines = read_lines(qpath);
    ds.files.push_back(qpath);
    std::vector<std::string> alines;
    const auto apath = dir / "possible_answer" / ("BFCL_v4_" + cat + ".json");
    if (!is_relevance_category(cat)) {
      if (!std::filesystem::exists(apath)) throw BfclError(apath.string() + ": ground-truth file for category '" + cat + "' not found");
      alines = read_lines(apath);
      ds.files.push_back(apath);
      if (alines.size() != qlines.size()) {
        throw BfclError(apath.string() + ": " + std::to_string(alines.size()) + " lines, but " + qpath.string() + " has " +
                        std::to_string(qlines.size()));
      }
    }
    for (std::size_t i = 0; i < qlines.size(); ++i) {
      const std::string where = qpath.string() + ":" + std::to_string(i + 1);
      BfclEntry e = parse_question_line(qlines[i], where);
      if (e.category != cat) bad(where, "id '" + e.id + "' does not belong to category '" + cat + "'");
      if (!alines.empty()) {
        const std::string awhere = apath.string() + ":" + std::to_string(i + 1);
        std::string aid;
        e.ground_truth = parse_answer_line(alines[i], awhere, &aid);
        if (aid != e.id) bad(awhere, "id '" + aid + "' does not match question id '" + e.id + "' on the same line");
        if (e.ground_truth.empty()) bad(awhere, "ground_truth of " + aid + " is empty");
        for (const auto& g : e.ground_truth) {
          bool found = false;
          for (const auto& f : e.functions) found |= f.name == g.name;
          if (!found) bad(awhere, "ground_truth function '" + g.name + "' is not in the function list of " + aid);
        }
      }
      if (e.functions.empty() && !is_relevance_category(cat)) bad(where, "entry " + e.id + " has no functions");
      if (ds.by_id.count(e.id)) bad(where, "duplicate id '" + e.id + "'");
      ds.by_id[e.id] = ds.entries.size();
      ds.entries.push_back(std::move(e));
    }
    ds.categories.push_back(cat);
  }
  return ds;
}

}  // namespace atlas::suites::bfcl
