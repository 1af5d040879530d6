#pragma once
// Builders for hand-written BFCL entries (question + ground truth as the data files hold them).
#include <initializer_list>
#include <string>
#include <string_view>

#include "suites/bfcl/dataset.hpp"
#include "suites/bfcl/score.hpp"

namespace atlas::test::bfcl {

/// A function document: name, `properties` JSON object text, `required` JSON list text.
/// The pieces joined, by appends: GCC 12 warns (-Wrestrict, a false positive, GCC PR 105329) on
/// `"[" + std::string&&` at -O2 and above.
inline std::string cat(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (std::string_view p : pieces) out += p;
  return out;
}

inline std::string fn(const std::string& name, const std::string& props, const std::string& required = "[]") {
  return R"({"name": ")" + name + R"(", "description": "d", "parameters": {"type": "dict", "properties": )" + props +
         R"(, "required": )" + required + "}}";
}

/// An entry of `id`'s category with the function list `functions` (JSON list text) and ground
/// truth `gt` (JSON list text; "" for relevance categories).
inline suites::bfcl::BfclEntry entry(const std::string& id, const std::string& functions, const std::string& gt = "") {
  const std::string q = R"({"id": ")" + id + R"(", "question": [[{"role": "user", "content": "q"}]], "function": )" +
                        functions + "}";
  suites::bfcl::BfclEntry e = suites::bfcl::parse_question_line(q, "test");
  if (!gt.empty()) {
    e.ground_truth = suites::bfcl::parse_answer_line(R"({"id": ")" + id + R"(", "ground_truth": )" + gt + "}", "test", nullptr);
  }
  return e;
}

/// Scores `output` (python/json text, or fc JSON text when format is fc).
inline suites::bfcl::EntryVerdict score(const suites::bfcl::BfclEntry& e, const std::string& output,
                                        suites::bfcl::OutputFormat format = suites::bfcl::OutputFormat::python,
                                        bool underscore_to_dot = false) {
  const nlohmann::ordered_json result =
      format == suites::bfcl::OutputFormat::fc ? nlohmann::ordered_json::parse(output) : nlohmann::ordered_json(output);
  return suites::bfcl::score_entry(e, result, suites::bfcl::ScoreOptions{format, underscore_to_dot});
}

}  // namespace atlas::test::bfcl
