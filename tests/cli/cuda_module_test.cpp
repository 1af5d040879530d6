// The CUDA backend and CUPTI are a module opened on demand (engine/backend_module.hpp): a command
// that never touches the GPU must not load cudart, cuBLAS or CUPTI (they cost ~70 ms and ~200 MB
// of RSS at start-up); `--backend cuda` must open the module and reach the CUDA code.
// The dynamic loader's own trace (LD_DEBUG=libs) says which libraries a process loaded.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "tests/cli/cli_util.hpp"
#include "tests/run_process.hpp"
#include "tests/test_data.hpp"

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// The loader's trace of `args` (stdout and stderr of the command, then the LD_DEBUG lines).
atlas::test::ShellResult traced(const std::string& exe, const std::string& cwd, const std::string& args) {
  return atlas::test::run_shell("cd " + quoted(cwd) + " && LD_DEBUG=libs " + quoted(exe) + " " + args + " 2>&1");
}

bool loads_cuda_libraries(const std::string& trace) {
  for (const char* lib : {"libcudart", "libcublas", "libcupti", "libatlas-cuda"}) {
    if (trace.find(std::string("find library=") + lib) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("--help, diff and a CPU generate load no CUDA library (and --help no libcurl)") {
  const auto run = atlas::test::cli_runner("cli_cuda_module_cpu");
  if (!run) return;
  const std::string cwd = run->cwd.string();

  const auto help = traced(run->exe, cwd, "--help");
  CHECK(help.rc == 0);
  CHECK(help.out.find("atlas-bench: LLM inference benchmarks") != std::string::npos);
  CHECK(help.out.find("find library=libc.so") != std::string::npos);  // the trace works at all
  CHECK_FALSE(loads_cuda_libraries(help.out));
  // libcurl (and its ~30 libraries) is opened by the endpoint client on first use, not at start.
  CHECK(help.out.find("find library=libcurl") == std::string::npos);

  const auto diff = traced(run->exe, cwd, "diff --help");
  CHECK(diff.rc == 0);
  CHECK_FALSE(loads_cuda_libraries(diff.out));

  atlas::test::require_data(atlas::test::stories_bin());
  const auto gen = traced(run->exe, cwd,
                          "generate --backend cpu --max-tokens 4 --json --model " + quoted(atlas::test::stories_bin().string()));
  INFO(gen.out);
  CHECK(gen.rc == 0);
  CHECK(gen.out.find("\"output_ids\"") != std::string::npos);
  CHECK_FALSE(loads_cuda_libraries(gen.out));
}

TEST_CASE("generate --backend cuda opens the CUDA module and reaches the CUDA code") {
  const auto run = atlas::test::cli_runner("cli_cuda_module_cuda");
  if (!run) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const auto r = atlas::test::run_shell("cd " + quoted(run->cwd.string()) + " && " + quoted(run->exe) +
                                        " generate --backend cuda --max-tokens 4 --json --model " +
                                        quoted(atlas::test::stories_bin().string()) + " 2>&1");
  INFO(r.out);
#ifdef ATLAS_HAVE_CUDA
  if (r.rc == 0) {
    // A GPU machine: the module ran the model.
    CHECK(r.out.find("\"backend\":\"cuda\"") != std::string::npos);
  } else {
    // No GPU here: the error comes from inside the module (so it was found, its ABI matched and
    // its exceptions reach the CLI as typed errors), not from the loader; a missing device is the
    // machine's failure, exit 4, not an input error.
    CHECK(r.rc == 4);
    CHECK(r.out.find("atlas-bench: machine error: cuda backend: no ") != std::string::npos);
  }
  CHECK(r.out.find("cannot open the CUDA backend module") == std::string::npos);
#else
  CHECK(r.rc == 3);
  CHECK(r.out.find("this build has no CUDA backend") != std::string::npos);
#endif
}

TEST_CASE("ATLAS_CUDA_MODULE pointing at a missing file is an error naming it") {
  const auto run = atlas::test::cli_runner("cli_cuda_module_missing");
  if (!run) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const std::string missing = (run->cwd / "no-such-module.so").string();
  const auto r = atlas::test::run_shell("cd " + quoted(run->cwd.string()) + " && ATLAS_CUDA_MODULE=" + quoted(missing) + " " +
                                        quoted(run->exe) + " generate --backend cuda --max-tokens 1 --model " +
                                        quoted(atlas::test::stories_bin().string()) + " 2>&1");
  INFO(r.out);
  CHECK(r.rc == 3);
  CHECK(r.out.find("cannot open the CUDA backend module libatlas-cuda.so") != std::string::npos);
  CHECK(r.out.find(missing + ": no such file") != std::string::npos);

  // A bare file name the loader's search path does not hold is a wrong name too (it exited 4).
  const auto bare = atlas::test::run_shell("cd " + quoted(run->cwd.string()) + " && ATLAS_CUDA_MODULE=libatlas-cuda-typo.so " +
                                           quoted(run->exe) + " generate --backend cuda --max-tokens 1 --model " +
                                           quoted(atlas::test::stories_bin().string()) + " 2>&1");
  INFO(bare.out);
  CHECK(bare.rc == 3);
  CHECK(bare.out.find("libatlas-cuda-typo.so: ") != std::string::npos);
}

// A module that is there but cannot serve (it does not load, or is not an atlas module) is the
// machine's or the build's failure, exit 4, unlike a path the user named wrongly (exit 3, above).
TEST_CASE("ATLAS_CUDA_MODULE naming a file that does not load, or a library that is not an atlas module, exits 4") {
  const auto run = atlas::test::cli_runner("cli_cuda_module_broken");
  if (!run) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const std::string broken = (run->cwd / "broken-module.so").string();
  atlas::test::run_shell("printf 'not an ELF file' > " + quoted(broken));
  const auto generate_with = [&](const std::string& module) {
    return atlas::test::run_shell("cd " + quoted(run->cwd.string()) + " && ATLAS_CUDA_MODULE=" + quoted(module) + " " + quoted(run->exe) +
                                  " generate --backend cuda --max-tokens 1 --model " + quoted(atlas::test::stories_bin().string()) + " 2>&1");
  };
  const auto r = generate_with(broken);
  INFO(r.out);
  CHECK(r.rc == 4);
  CHECK(r.out.find("atlas-bench: machine error: backend 'cuda': cannot open the CUDA backend module libatlas-cuda.so") != std::string::npos);
  CHECK(r.out.find(broken + ": ") != std::string::npos);

  // libm: loads (a bare name goes to the loader's search path) but has no atlas entry point.
  const auto other = generate_with("libm.so.6");
  INFO(other.out);
  CHECK(other.rc == 4);
  CHECK(other.out.find("libm.so.6: not an atlas CUDA module") != std::string::npos);
}
