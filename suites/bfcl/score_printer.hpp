#pragma once
// Output formats of `atlas-bench bfcl score`, each a printer behind the project's one printer
// interface (common/printer.hpp).
#include <filesystem>
#include <memory>
#include <ostream>
#include <vector>

#include "common/printer.hpp"
#include "suites/bfcl/score.hpp"

namespace atlas::suites::bfcl {

/// What `bfcl score` prints: each input line's verdict (in input order) and the summary.
struct ScoredResults {
  std::vector<EntryVerdict> verdicts;
  ScoreSummary summary;
};

using ScorePrinter = Printer<ScoredResults>;

/// One JSON object per input line ({"id", "category", "valid", "error_type"}), then the summary
/// line ({"summary": {...}}).
std::unique_ptr<ScorePrinter> make_json_lines_printer();
/// A readable table: accuracy per category, BFCL's summaries, the error types seen.
std::unique_ptr<ScorePrinter> make_table_printer();

/// Scores `results_path` against `<data_dir>/bfcl` and prints with `printer`. Throws BfclError
/// for bad input (the CLI's exit code 3).
void score_results_file(const std::filesystem::path& data_dir, const std::filesystem::path& results_path,
                        const ScoreOptions& opt, const ScorePrinter& printer, std::ostream& os);

}  // namespace atlas::suites::bfcl
