// End-to-end `bfcl score --json`: through the library, and through the atlas-bench executable
// (env ATLAS_BENCH_EXE, set by ctest).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "suites/bfcl/bfcl_error.hpp"
#include "suites/bfcl/score_printer.hpp"
#include "tests/built_exe.hpp"
#include "tests/run_process.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

using namespace atlas::suites::bfcl;

namespace {

// Real ids; verdicts worked out from the spec (section per line).
const char* kResults =
    R"({"id": "simple_python_1", "result": "[math.factorial(number=5)]"})" "\n"               // valid
    R"({"id": "simple_python_1", "result": "[math.factorial(number='5')]"})" "\n"             // §5.1 type_error:simple
    R"({"id": "parallel_1", "result": "[calculate_em_force(b_field=5, area=2, d_time=10), calculate_em_force(b_field=5, area=2, d_time=4)]"})" "\n"  // §4 valid
    "\n"                                                                                      // blank lines are skipped
    R"({"id": "multiple_4", "result": "not a call"})" "\n"                                   // §2.2 decoder_failed
    R"({"id": "irrelevance_1", "result": "I cannot do that."})" "\n"                         // §6 valid
    R"({"id": "live_relevance_1-1-0", "result": "[]"})" "\n";                                // §6 relevance_error

std::filesystem::path write_results(const std::string& name, const std::string& text) {
  const auto dir = atlas::test::scratch_dir(name);
  const auto p = dir / "results.jsonl";
  std::ofstream(p) << text;
  return p;
}

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

void check_verdict_lines(const std::vector<nlohmann::json>& lines) {
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == nlohmann::json::parse(R"({"id":"simple_python_1","category":"simple_python","valid":true,"error_type":null})"));
  CHECK(lines[1]["error_type"] == "type_error:simple");
  CHECK(lines[2]["valid"] == true);
  CHECK(lines[3]["id"] == "multiple_4");
  CHECK(lines[3]["error_type"] == "ast_decoder:decoder_failed");
  CHECK(lines[4]["valid"] == true);
  CHECK(lines[5]["error_type"] == "relevance_error:decoder_failed");
  const auto& s = lines[6]["summary"];
  CHECK(s["categories"]["simple_python"]["accuracy"] == 0.5);
  CHECK(s["categories"]["simple_python"]["total"] == 2);
  CHECK(s["categories"]["parallel"]["accuracy"] == 1.0);
  CHECK(s["categories"]["multiple"]["accuracy"] == 0.0);
  CHECK(s["categories"]["irrelevance"]["accuracy"] == 1.0);
  CHECK(s["categories"]["live_relevance"]["accuracy"] == 0.0);
  CHECK(s["non_live_ast"].is_null());  // parallel_multiple not scored: N/A as upstream
  CHECK(s["relevance"] == 0.0);
  CHECK(s["overall"]["correct"] == 3);
  CHECK(s["overall"]["total"] == 6);
}

struct Run {
  int code = -1;
  std::string out;
};

Run run(const std::string& cmd) {
  const atlas::test::ShellResult r = atlas::test::run_shell(cmd + " 2>&1");
  return {r.rc, r.out};
}

}  // namespace

TEST_CASE("bfcl score --json through the library") {
  const auto path = write_results("bfcl_score_lib", kResults);
  std::ostringstream os;
  score_results_file(atlas::test::data_dir(), path, ScoreOptions{}, *make_json_lines_printer(), os);
  check_verdict_lines(json_lines(os.str()));

  std::ostringstream table;
  score_results_file(atlas::test::data_dir(), path, ScoreOptions{}, *make_table_printer(), table);
  CHECK(table.str().find("simple_python") != std::string::npos);
  CHECK(table.str().find("50.00%") != std::string::npos);
}

TEST_CASE("bfcl score: non-live summary is the unweighted mean of the four AST categories (spec §7)") {
  const auto path = write_results("bfcl_score_summary",
      R"({"id": "simple_python_1", "result": "[math.factorial(number=5)]"})" "\n"
      R"({"id": "multiple_4", "result": "x"})" "\n"
      R"({"id": "parallel_1", "result": "[calculate_em_force(b_field=5, area=2, d_time=10), calculate_em_force(b_field=5, area=2, d_time=4)]"})" "\n"
      R"({"id": "parallel_1", "result": "[]"})" "\n"
      R"({"id": "parallel_multiple_1", "result": "[]"})" "\n");
  std::ostringstream os;
  score_results_file(atlas::test::data_dir(), path, ScoreOptions{}, *make_json_lines_printer(), os);
  const auto lines = json_lines(os.str());
  // simple 1.0, multiple 0.0, parallel 0.5, parallel_multiple 0.0 -> 0.375 (pooled would be 0.4).
  CHECK(lines.back()["summary"]["non_live_ast"] == 0.375);
  CHECK(lines.back()["summary"]["overall"]["accuracy"] == 0.4);
}

TEST_CASE("bfcl score: bad results files name the file and line") {
  auto message = [](const std::string& text, OutputFormat f = OutputFormat::python) -> std::string {
    const auto path = write_results("bfcl_score_bad", text);
    std::ostringstream os;
    try {
      score_results_file(atlas::test::data_dir(), path, ScoreOptions{f, false}, *make_json_lines_printer(), os);
    } catch (const BfclError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message("{\"id\": \"simple_python_1\", \"result\": \"[]\"}\n{oops\n").find("results.jsonl:2: malformed JSON") != std::string::npos);
  CHECK(message("{\"result\": \"[]\"}\n").find("results.jsonl:1: field 'id'") != std::string::npos);
  CHECK(message("{\"id\": \"simple_python_1\"}\n").find("field 'result' is missing") != std::string::npos);
  CHECK(message("{\"id\": \"simple_python_1\", \"result\": [1]}\n").find("must be a string in python format") != std::string::npos);
  CHECK(message("{\"id\": \"simple_python_99999\", \"result\": \"[]\"}\n").find("results.jsonl:1: field 'id': 'simple_python_99999' is not in the loaded BFCL data") != std::string::npos);
  CHECK(message("{\"id\": \"simple_java_1\", \"result\": \"[]\"}\n").find("results.jsonl:1") != std::string::npos);
  // fc accepts any JSON result (a text answer is a decoder failure, not bad input).
  CHECK(message("{\"id\": \"irrelevance_1\", \"result\": \"text\"}\n", OutputFormat::fc).empty());
}

TEST_CASE("bfcl score --json through the atlas-bench executable") {
  const std::string exe = atlas::test::bench_exe_or_skip();
  if (exe.empty()) return;
  const auto path = write_results("bfcl_score_cli", kResults);
  const std::string base = std::string(exe) + " bfcl score --data-dir " + atlas::test::data_dir().string() + " --results ";
  const Run ok = run(base + path.string() + " --json");
  CHECK(ok.code == 0);
  check_verdict_lines(json_lines(ok.out));

  const auto bad = write_results("bfcl_score_cli_bad", "{\"id\": \"simple_python_1\", \"result\": \"[]\"}\nnot json\n");
  const Run err = run(base + bad.string() + " --json");
  CHECK(err.code == 3);
  CHECK(err.out.find("results.jsonl:2") != std::string::npos);

  const Run fc = run(base + path.string() + " --format fc --underscore-to-dot");
  CHECK(fc.code == 0);
  CHECK(fc.out.find("ast_decoder:decoder_failed") != std::string::npos);  // text results in fc format
  CHECK(run(base + path.string() + " --format yaml").code != 0);
}

TEST_CASE("bfcl score: differential verdicts (Python's ast + the upstream checker logic)") {
  // tests/bfcl/differential_verdicts.jsonl: ~1500 generated and fuzzed outputs for real entries,
  // each with the verdict computed by CPython 3.11 running BFCL's decoder and AST checker logic
  // (MU:248-370, AC, ER:263-367) - stratified over categories and error types.
  const auto path = atlas::test::source_dir() / "tests" / "bfcl" / "differential_verdicts.jsonl";
  std::ifstream in(path);
  REQUIRE(in.good());
  static const BfclDataset ds = load_bfcl_dataset(atlas::test::data_dir());
  std::string line;
  int n = 0, mismatches = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::ordered_json::parse(line);
    const BfclEntry* e = ds.find(j["id"].get<std::string>());
    REQUIRE(e != nullptr);
    const EntryVerdict v = score_entry(*e, j["result"], ScoreOptions{});
    const std::string expected = j["error_type"].is_null() ? "" : j["error_type"].get<std::string>();
    if (v.valid != j["valid"].get<bool>() || v.error_type != expected) {
      ++mismatches;
      INFO(line);
      CHECK(v.error_type == expected);
    }
    ++n;
  }
  CHECK(n >= 1500);
  CHECK(mismatches == 0);
}
