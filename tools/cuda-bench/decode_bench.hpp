#pragma once
// Decode-speed and TTFT benchmark of the CUDA backend on synthetic weights (batch 1), against the
// roofline of a device-to-device copy measured in the same run (suites/decode_anatomy/
// cuda_copy_bandwidth.hpp). A benchmark, not a test: it prints and records numbers; targets are
// judged by people and gates, not asserted here. atlas-cuda-bench (main.cpp) is its command line.
#include <nlohmann/json.hpp>

#include "engine/model_config.hpp"

namespace atlas::cuda_bench {

struct CudaDecodeBenchOptions {
  int prompt_tokens = 128;
  int new_tokens = 256;
  int ttft_prompt_tokens = 4096;  ///< 0: skip the long-prompt TTFT
  int repeats = 3;                ///< timed repetitions (median reported)
  bool bf16 = true;
};

/// Runs graph and eager decode (and TTFT) for `config`; returns a JSON object of the figures.
nlohmann::json run_cuda_decode_bench(const engine::ModelConfig& config, const CudaDecodeBenchOptions& opts,
                                     double copy_bytes_per_s);

}  // namespace atlas::cuda_bench
