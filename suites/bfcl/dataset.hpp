#pragma once
// BFCL v4 data files: question files `<data-dir>/bfcl/BFCL_v4_<category>.json` and ground truth
// `<data-dir>/bfcl/possible_answer/BFCL_v4_<category>.json`, one JSON object per line, paired by
// line position (ER:55-67). Malformed input throws BfclError naming the file, line and field.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/bfcl/py_value.hpp"

namespace atlas::suites::bfcl {

/// The categories of our subset, in BFCL's reporting order.
const std::vector<std::string>& all_categories();
/// Scored on "did the model call anything" (spec §2.1: name contains "relevance").
bool is_relevance_category(std::string_view category);
/// The category an id belongs to (`live_simple_3-2-1` -> `live_simple`), as BFCL's
/// extract_test_category_from_id: everything before the last '_'.
std::string category_of_id(std::string_view id);

/// One parameter of a function schema, as the checker reads it (spec §1).
struct ParamSchema {
  std::string type;       ///< string | integer | float | boolean | array | tuple | dict | any
  std::string item_type;  ///< items.type for array/tuple, else ""
};

struct FunctionSchema {
  std::string name;
  std::vector<std::string> required;
  std::vector<std::pair<std::string, ParamSchema>> properties;  ///< in schema order
  nlohmann::ordered_json raw;                                    ///< the document as in the file

  const ParamSchema* find(std::string_view param) const;
};

/// One ground-truth call: parameter -> list of acceptable values ("" = may be omitted).
struct GroundTruthCall {
  std::string name;
  std::vector<std::pair<std::string, std::vector<PyValue>>> params;

  const std::vector<PyValue>* find(std::string_view param) const;
};

struct BfclEntry {
  std::string id;
  std::string category;
  nlohmann::ordered_json question;  ///< list of turns, each a list of {role, content}
  std::vector<FunctionSchema> functions;
  std::vector<GroundTruthCall> ground_truth;  ///< empty for relevance categories
  std::string source;                          ///< "<file>:<line>"
};

struct BfclDataset {
  std::vector<BfclEntry> entries;               ///< category order, then file order
  std::map<std::string, std::size_t> by_id;     ///< id -> index in entries
  std::vector<std::string> categories;          ///< the categories loaded
  std::vector<std::filesystem::path> files;     ///< every file read (questions, possible answers)

  const BfclEntry* find(std::string_view id) const;
  std::size_t count(std::string_view category) const;
};

/// Loads `categories` (empty: every category of all_categories() whose question file exists)
/// from `<data_dir>/bfcl/`. A requested category without a question file, or an AST category
/// without its possible_answer file, is an error.
BfclDataset load_bfcl_dataset(const std::filesystem::path& data_dir, const std::vector<std::string>& categories = {});

/// Parses one question line / one possible-answer line (exposed for tests). `where` names the
/// file and line for error messages.
BfclEntry parse_question_line(std::string_view line, const std::string& where);
std::vector<GroundTruthCall> parse_answer_line(std::string_view line, const std::string& where, std::string* id);

}  // namespace atlas::suites::bfcl
