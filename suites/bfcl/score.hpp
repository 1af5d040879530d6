#pragma once
// Scoring model outputs the way BFCL's eval runner does (ER:263-367, spec §2, §6) and
// aggregating per category and into BFCL's summaries (EH, spec §7).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/bfcl/checker.hpp"
#include "suites/bfcl/dataset.hpp"
#include "suites/bfcl/decode.hpp"

namespace atlas::suites::bfcl {

struct ScoreOptions {
  OutputFormat format = OutputFormat::python;
  bool underscore_to_dot = false;  ///< BFCL's model-config flag (spec §5 step 1)
};

struct EntryVerdict {
  std::string id;
  std::string category;
  bool valid = false;
  std::string error_type;  ///< "" when valid
  std::string error;
};

/// Scores one model output for `entry`. `result` is a JSON string (python/json formats) or what
/// an FC handler stored (fc). Never throws on model output: every failure is a verdict.
EntryVerdict score_entry(const BfclEntry& entry, const nlohmann::ordered_json& result, const ScoreOptions& opt);

struct CategoryScore {
  std::string category;
  std::size_t correct = 0;
  std::size_t total = 0;
  double accuracy() const { return total ? static_cast<double>(correct) / static_cast<double>(total) : 0.0; }
};

/// Per-category accuracy plus BFCL's summaries (spec §7). A summary is nullopt ("N/A" upstream)
/// unless every category it covers was scored.
struct ScoreSummary {
  std::vector<CategoryScore> categories;  ///< scored categories, in all_categories() order
  std::optional<double> non_live_ast;     ///< unweighted mean: simple_python, multiple, parallel, parallel_multiple
  std::optional<double> live_ast;         ///< pooled over the four live AST categories (EH weighted mean)
  std::optional<double> irrelevance;      ///< unweighted mean: irrelevance, live_irrelevance
  std::optional<double> relevance;        ///< live_relevance
  std::size_t correct = 0, total = 0;     ///< pooled over every scored line
};

ScoreSummary summarize(const std::vector<EntryVerdict>& verdicts);

/// One line of a results file: `{"id": ..., "result": ...}`.
struct ResultLine {
  std::string id;
  nlohmann::ordered_json result;
  std::string where;  ///< "<file>:<line>"
};

/// Reads a results file (JSON Lines; blank lines skipped). python/json formats need a string
/// `result`. Throws BfclError naming the file and line.
std::vector<ResultLine> read_results_file(const std::filesystem::path& path, OutputFormat format);

/// Scores each line on its own (ids may repeat), in order. An id missing from `ds` throws
/// BfclError naming the line.
std::vector<EntryVerdict> score_results(const BfclDataset& ds, const std::vector<ResultLine>& lines,
                                        const ScoreOptions& opt);

/// {"id", "category", "valid", "error_type": null | "..."}
nlohmann::ordered_json to_json(const EntryVerdict& v);
/// {"summary": {"categories": {cat: {accuracy, correct, total}}, "non_live_ast", "live_ast",
///  "irrelevance", "relevance", "overall": {accuracy, correct, total}}}
nlohmann::ordered_json to_json(const ScoreSummary& s);

}  // namespace atlas::suites::bfcl
