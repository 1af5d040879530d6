#pragma once
// The main() of the Google Benchmark binaries (tools/bench/*.cpp), in place of BENCHMARK_MAIN:
// an exception thrown while a benchmark runs (a missing model, a bad ATLAS_DATA_DIR, a file that
// does not parse) would otherwise end the process in std::terminate (SIGABRT, exit 134). Here it
// is mapped as in every other binary (common/exit_code.hpp): 3 on a bad input, 4 on a failure of
// the machine or the program; an unrecognized argument is a usage error, 3 (BENCHMARK_MAIN: 1,
// which the README's table reserves for a regression).
#include <benchmark/benchmark.h>

#include "common/exit_code.hpp"

namespace atlas::bench {

inline int benchmark_main(int argc, char** argv, const char* program) {
  try {
    ::benchmark::Initialize(&argc, argv);
    if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return to_int(ExitCode::input_error);
    ::benchmark::RunSpecifiedBenchmarks();
    ::benchmark::Shutdown();
    return to_int(ExitCode::pass);
  } catch (...) {
    return exit_code_of_current_exception(program);
  }
}

}  // namespace atlas::bench
