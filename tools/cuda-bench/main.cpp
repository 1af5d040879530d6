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
#include "common/option_value.hpp"
#include "engine/formats/presets.hpp"
#include "suites/decode_anatomy/cuda_copy_bandwidth.hpp"
#include "tools/cuda-bench/decode_bench.hpp"
#include "tools/cuda-bench/token_anatomy.hpp"

int main(int argc, char** argv) {
  using namespace atlas::suites;
  using namespace atlas::cuda_bench;
  CudaDecodeBenchOptions opts;
  std::string out_path, models = "qwen3-0.6b,qwen3-8b";
  bool anatomy = true;
  int anatomy_tokens = 64;
  // Usage errors are InputErrors naming the option and value (exit 3), mapped as any other.
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw atlas::InputError(a + " needs a value");
        return argv[++i];
      };
      auto count = [&](int min_value) { return atlas::parse_int_option(a, next(), min_value, 1'000'000); };
      if (a == "--out") out_path = next();
      else if (a == "--models") models = next();
      else if (a == "--prompt") opts.prompt_tokens = count(1);
      else if (a == "--new") opts.new_tokens = count(1);
      else if (a == "--ttft-prompt") opts.ttft_prompt_tokens = count(0);
      else if (a == "--repeats") opts.repeats = count(1);
      else if (a == "--fp32") opts.bf16 = false;
      else if (a == "--no-anatomy") anatomy = false;
      else if (a == "--anatomy-tokens") anatomy_tokens = count(1);
      else throw atlas::InputError("unknown option " + a);
    }
  } catch (...) {
    return atlas::exit_code_of_current_exception("atlas-cuda-bench");
  }
  try {
    const double bw = measure_copy_bandwidth();
    std::printf("device-to-device copy: %.1f GB/s (read + write)\n", bw / 1e9);
    nlohmann::json all;
    all["copy_bandwidth_GBps"] = bw / 1e9;
    std::vector<std::string> names;
    for (std::size_t p = 0; p <= models.size();) {
      const std::size_t q = models.find(',', p);
      std::string m = models.substr(p, q == std::string::npos ? std::string::npos : q - p);
      p = q == std::string::npos ? models.size() + 1 : q + 1;
      if (!m.empty()) names.push_back(std::move(m));
    }
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
