// atlas-cuda-bench: decode tok/s, % of the copy-bandwidth roofline and TTFT of the CUDA backend on
// synthetic Qwen3-8B / Qwen3-0.6B weights (batch 1). Usage:
//   atlas-cuda-bench [--out FILE.json] [--models qwen3-0.6b,qwen3-8b (engine presets)] [--prompt N] [--new N]
//                    [--ttft-prompt N] [--repeats N] [--fp32] [--no-anatomy] [--anatomy-tokens N]
// Exits 3 on a usage error (the message names the option and value), 4 on a failure of the
// machine (no device, a CUDA error: common/exit_code.hpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "engine/formats/presets.hpp"
#include "suites/decode_anatomy/cuda_copy_bandwidth.hpp"
#include "tools/cuda-bench/decode_bench.hpp"
#include "tools/cuda-bench/token_anatomy.hpp"
#include "tools/cli_parse.hpp"

int main(int argc, char** argv) {
  using namespace atlas::suites;
  using namespace atlas::cuda_bench;
  CudaDecodeBenchOptions opts;
  std::string out_path;
  std::vector<std::string> names = {"qwen3-0.6b", "qwen3-8b"};
  bool no_anatomy = false;
  int anatomy_tokens = 64;
  // CLI11, as atlas-bench: a bad value or an unknown option names it and exits 3 (tools/cli_parse.hpp).
  CLI::App app{"CUDA decode tok/s, % of roofline and TTFT on synthetic weights (batch 1)", "atlas-cuda-bench"};
  app.add_option("--out", out_path, "JSON file of the figures");
  app.add_option("--models", names, "engine presets, comma-separated")->delimiter(',');
  app.add_option("--prompt", opts.prompt_tokens, "prompt tokens before decode")->check(CLI::Range(1, 1'000'000));
  app.add_option("--new", opts.new_tokens, "decoded tokens per timed run")->check(CLI::Range(1, 1'000'000));
  app.add_option("--ttft-prompt", opts.ttft_prompt_tokens, "long-prompt TTFT length (0: none; qwen3-8b only)")
      ->check(CLI::Range(0, 1'000'000));
  app.add_option("--repeats", opts.repeats, "timed repetitions (the median is reported)")->check(CLI::Range(1, 1'000'000));
  app.add_flag_callback("--fp32", [&] { opts.bf16 = false; }, "float32 weights (default bf16)");
  app.add_flag("--no-anatomy", no_anatomy, "skip the CUPTI anatomy");
  app.add_option("--anatomy-tokens", anatomy_tokens, "traced decode tokens per mode")->check(CLI::Range(1, 1'000'000));
  if (const auto code = atlas::cli::parse_or_exit_code(app, argc, argv)) return *code;
  const bool anatomy = !no_anatomy;
  try {
    const double bw = measure_copy_bandwidth();
    std::printf("device-to-device copy: %.1f GB/s (read + write)\n", bw / 1e9);
    nlohmann::json all;
    all["copy_bandwidth_GBps"] = bw / 1e9;
    // Every timed run first, then the CUPTI anatomies: CUPTI stays attached to the process after
    // a tracer is gone, and a decode run after an anatomy measured ~3% slower on the H200
    // (qwen3-8b 237-238 tok/s after qwen3-0.6b's anatomy, 244-246 without; docs/PERF.md).
    for (const std::string& m : names) {
      const atlas::engine::ModelConfig c = atlas::engine::find_preset(m).config;  // any engine preset
      CudaDecodeBenchOptions o = opts;
      if (m != "qwen3-8b") o.ttft_prompt_tokens = 0;
      all["models"][m] = run_cuda_decode_bench(c, o, bw);
    }
    for (const std::string& m : names) {
      if (!anatomy) break;
      CudaAnatomyOptions ao;
      ao.prompt_tokens = opts.prompt_tokens;
      ao.new_tokens = anatomy_tokens;
      ao.bf16 = opts.bf16;
      all["models"][m]["anatomy"] = run_cuda_decode_anatomy(atlas::engine::find_preset(m).config, ao, bw);
    }
    if (!out_path.empty()) atlas::write_file_atomic(out_path, all.dump(2) + "\n");
  } catch (...) {
    return atlas::exit_code_of_current_exception("atlas-cuda-bench");
  }
  return 0;
}
