// `atlas-bench bfcl score`: scores a results file of model outputs exactly as BFCL's AST checker.
#include <iostream>
#include <memory>

#include "common/exit_code.hpp"
#include "suites/bfcl/bfcl_error.hpp"
#include "suites/bfcl/score_printer.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

struct BfclScoreOptions {
  std::string data_dir;
  std::string results;
  std::string format = "python";
  bool underscore_to_dot = false;
  bool json = false;
};

const RegisterCommand kBfcl{Command{
    "bfcl", "BFCL subset: score function-calling outputs as BFCL's AST checker does",
    [](CLI::App& sub, const GlobalOptions& global) -> std::function<int()> {
      sub.require_subcommand(1);
      auto opts = std::make_shared<BfclScoreOptions>();
      CLI::App* score = sub.add_subcommand("score", "Score a results file (JSON Lines of {\"id\", \"result\"})");
      score->add_option("--data-dir", opts->data_dir, "Data directory holding bfcl/ (default: the global --data-dir / ATLAS_DATA_DIR)");
      score->add_option("--results", opts->results, "Results file: one {\"id\": ..., \"result\": ...} per line")->required();
      score->add_option("--format", opts->format, "How results are decoded: python (prompt mode), json, fc (native function calling)")
          ->check(CLI::IsMember({"python", "json", "fc"}));
      score->add_flag("--underscore-to-dot", opts->underscore_to_dot,
                      "Expect '.' in function names replaced by '_' (BFCL's underscore_to_dot model option)");
      score->add_flag("--json", opts->json, "One JSON verdict per input line, then a summary line");
      return [opts, &global, score]() -> int {
        if (!score->parsed()) return to_int(ExitCode::input_error);
        suites::bfcl::ScoreOptions so;
        so.format = *suites::bfcl::parse_output_format(opts->format);
        so.underscore_to_dot = opts->underscore_to_dot;
        const std::string data_dir = opts->data_dir.empty() ? resolve_data_dir(global) : opts->data_dir;
        const auto printer = opts->json ? suites::bfcl::make_json_lines_printer() : suites::bfcl::make_table_printer();
        suites::bfcl::score_results_file(data_dir, opts->results, so, *printer, std::cout);
        return to_int(ExitCode::pass);
      };
    }}};

}  // namespace
}  // namespace atlas::cli
