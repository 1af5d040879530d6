// The exit codes of the binaries beside atlas-bench (README, "Exit codes"): the Google Benchmark
// binaries of tools/bench/ exit 3 on a usage error or a bad input, naming it, not 2 (which the
// gates call inconclusive), 1 (a regression), 4 ("internal error" from a std::stoi) or 134 (an
// exception that aborted). ctest hands their paths in ATLAS_BENCH_<NAME>_EXE
// (tests/CMakeLists.txt); a build without Google Benchmark has none and the cases are Skipped.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/process.hpp"
#include "tests/built_exe.hpp"
#include "tests/test_data.hpp"

namespace {

atlas::ProcessResult run(const std::vector<std::string>& argv, std::map<std::string, std::string> env = {}) {
  atlas::ProcessOptions o;
  o.env_overrides = std::move(env);
  return atlas::run_process_with(argv, o);
}

}  // namespace

TEST_CASE("bench_logits: a usage error or a bad option value exits 3 naming the option and value") {
  const std::string exe = atlas::test::built_exe_or_skip("ATLAS_BENCH_LOGITS_EXE");
  if (exe.empty()) return;
  const auto none = run({exe});
  CHECK(none.exit_status == 3);
  CHECK(none.err.find("model is required") != std::string::npos);

  const auto steps = run({exe, "model.bin", "--prompt", "1,2", "--steps", "many"});
  INFO(steps.err);
  CHECK(steps.exit_status == 3);
  CHECK(steps.err.find("--steps: Value many not in range 0 to 1000000") != std::string::npos);

  const auto threads = run({exe, "model.bin", "--prompt", "1", "--threads", "2x"});
  CHECK(threads.exit_status == 3);
  CHECK(threads.err.find("--threads: Value 2x not in range 0 to 4096") != std::string::npos);

  const auto prompt = run({exe, "model.bin", "--prompt", "1,two,3"});
  INFO(prompt.err);
  CHECK(prompt.exit_status == 3);
  CHECK(prompt.err.find("--prompt: Value two not in range 0 to ") != std::string::npos);

  const auto unknown = run({exe, "model.bin", "--prompt", "1", "--bogus", "3"});
  CHECK(unknown.exit_status == 3);
  CHECK(unknown.err.find("--bogus") != std::string::npos);
}

TEST_CASE("bench_engine_decode: a missing model exits 3 naming it (not an abort), an unknown argument exits 3") {
  const std::string exe = atlas::test::built_exe_or_skip("ATLAS_BENCH_ENGINE_DECODE_EXE");
  if (exe.empty()) return;
  const auto empty_data = atlas::test::scratch_dir("bench_decode_no_data");
  const auto r = run({exe, "--benchmark_filter=BM_Decode_stories260K"}, {{"ATLAS_DATA_DIR", empty_data.string()}});
  INFO(r.out << r.err);
  CHECK(r.exit_status == 3);
  CHECK(r.err.find("bench_engine_decode: error: ") != std::string::npos);
  CHECK(r.err.find("stories260K.bin") != std::string::npos);

  const auto unknown = run({exe, "--no-such-flag"});
  CHECK(unknown.exit_status == 3);
  CHECK(unknown.err.find("--no-such-flag") != std::string::npos);
}

TEST_CASE("bench_formats: a tokenizer.json that does not parse exits 3 naming it (not an abort)") {
  const std::string exe = atlas::test::built_exe_or_skip("ATLAS_BENCH_FORMATS_EXE");
  if (exe.empty()) return;
  const auto dir = atlas::test::scratch_dir("bench_formats_bad_tokenizer");
  const auto bad = dir / "tokenizer.json";
  std::ofstream(bad) << "this is not JSON";
  const auto r = run({exe, "--benchmark_filter=BM_BpeEncode"}, {{"ATLAS_QWEN3_TOKENIZER_JSON", bad.string()}});
  INFO(r.out << r.err);
  CHECK(r.exit_status == 3);
  CHECK(r.err.find("bench_formats: error: ") != std::string::npos);
  CHECK(r.err.find(bad.string()) != std::string::npos);
}
