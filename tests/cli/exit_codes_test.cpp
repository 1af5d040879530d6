// The exit codes of the real atlas-bench binary (README, "Exit codes"): 0 pass, 3 a bad input
// (the message names it), 4 a failure of the machine (here: --backend cuda without a GPU). The
// regression (1) and inconclusive (2) codes are asserted by the diff and gate CLI tests.
#include <doctest/doctest.h>

#include <string>

#include "tests/cli/cli_util.hpp"
#include "tests/test_data.hpp"

TEST_CASE("exit codes from the binary: 0 on success, 3 naming a bad input, 3 on a usage error") {
  const auto run = atlas::test::cli_runner("cli_exit_codes");
  if (!run) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const auto ok = (*run)({"generate", "--model", atlas::test::stories_bin().string(), "--max-tokens", "2"});
  CHECK(ok.exit_status == 0);

  const std::string missing = (run->cwd / "no-such-model.bin").string();
  const auto bad = (*run)({"generate", "--model", missing, "--max-tokens", "2"});
  INFO(bad.err);
  CHECK(bad.exit_status == 3);
  CHECK(bad.err.find("atlas-bench: error: ") != std::string::npos);
  CHECK(bad.err.find(missing) != std::string::npos);

  const auto usage = (*run)({"generate", "--no-such-flag"});
  CHECK(usage.exit_status == 3);
}

TEST_CASE("exit codes from the binary: no CUDA device is the machine's failure, 4, not an input error") {
  const auto run = atlas::test::cli_runner("cli_exit_code_machine");
  if (!run) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const auto r = (*run)({"generate", "--backend", "cuda", "--model", atlas::test::stories_bin().string(), "--max-tokens", "2"});
  INFO(r.err);
#ifdef ATLAS_HAVE_CUDA
  if (r.exit_status == 0) ATLAS_SKIP("this machine has a CUDA device: the no-device path cannot be reached");
  CHECK(r.exit_status == 4);
  CHECK(r.err.find("atlas-bench: machine error: cuda backend: no usable CUDA device: ") != std::string::npos);
  // It says what is missing (engine/no_device_message.hpp), not only that something is.
  const bool says_what = r.err.find("no NVIDIA driver") != std::string::npos ||
                         r.err.find("older than this build's runtime") != std::string::npos ||
                         r.err.find(") sees no device (") != std::string::npos ||
                         r.err.find("; driver CUDA ") != std::string::npos;
  CHECK(says_what);
#else
  // A build without the CUDA module: asking it for cuda is the request's error (exit 3).
  CHECK(r.exit_status == 3);
  CHECK(r.err.find("this build has no CUDA backend") != std::string::npos);
#endif
}

TEST_CASE("exit codes from the binary: a kernel knob's typo is the input's error, 3, named before any suite runs") {
  const auto run = atlas::test::cli_runner("cli_exit_code_knob");
  if (!run) return;
  atlas::test::require_data(atlas::test::stories_bin());
  // ATLAS_GEMV_KERNEL takes regs or async: "reg" once ran the default kernel silently, and read
  // lazily at the first launch it surfaced inside a suite (reported invalid, exit 2).
  atlas::ProcessOptions o;
  o.cwd = run->cwd;
  o.env_overrides = {{"ATLAS_GEMV_KERNEL", "reg"}};
  const auto r = atlas::run_process_with(
      {run->exe, "generate", "--backend", "cuda", "--model", atlas::test::stories_bin().string(), "--max-tokens", "2"}, o);
  INFO(r.err);
  CHECK(r.exit_status == 3);
#ifdef ATLAS_HAVE_CUDA
  CHECK(r.err.find("environment variable ATLAS_GEMV_KERNEL = 'reg' is not one of: regs, async") != std::string::npos);
#else
  CHECK(r.err.find("this build has no CUDA backend") != std::string::npos);
#endif
}
