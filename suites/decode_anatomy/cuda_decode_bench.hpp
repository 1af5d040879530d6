#pragma once
// Decode-speed and TTFT benchmark of the CUDA backend on synthetic weights (batch 1), with the
// roofline taken from a device-to-device copy measured in the same run. A benchmark, not a test:
// it prints and records numbers; targets are judged by people and gates, not asserted here.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/model_config.hpp"

namespace atlas::suites {

/// The engine's presets of those names (dimensions of Qwen/Qwen3-8B and Qwen/Qwen3-0.6B).
engine::ModelConfig qwen3_8b_config();
engine::ModelConfig qwen3_0_6b_config();

struct CudaDecodeBenchOptions {
  int prompt_tokens = 128;
  int new_tokens = 256;
  int ttft_prompt_tokens = 4096;  ///< 0: skip the long-prompt TTFT
  int repeats = 3;                ///< timed repetitions (median reported)
  bool bf16 = true;
};

/// Bytes read+written per second by a device-to-device copy of `bytes` (median of 10 after 2
/// warm-ups). Throws (kernels' CUDA error) when the two buffers cannot be allocated.
double measure_copy_bandwidth(std::size_t bytes = std::size_t{2} << 30);

/// Runs graph and eager decode (and TTFT) for `config`; returns a JSON object of the figures.
nlohmann::json run_cuda_decode_bench(const engine::ModelConfig& config, const CudaDecodeBenchOptions& opts,
                                     double copy_bytes_per_s);

}  // namespace atlas::suites
