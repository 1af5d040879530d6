#pragma once
// Measured anatomy of CUDA decode steps: for each decoded token, what the host asked of the
// driver (launch calls, graph launches, syncs, copies) and what the GPU did (kernels, copies by
// direction and pageable/pinned, per-stage GPU time, idle gaps), from CUPTI; plus a roofline
// line (weight + KV bytes per token over the device-to-device copy bandwidth measured in the same
// run). Graph replay and eager launches are measured side by side on one decoder.
// atlas-cuda-bench's whole-step view (wall, GPU span, idle gaps, launch latency per token); the
// per-stage reading of each window is the decode-anatomy suite's (suites/decode_anatomy/
// cupti_kernel_stages.hpp, stage_kernels), shared with the suite's CUPTI source.
#include <nlohmann/json.hpp>

#include "engine/model_config.hpp"

namespace atlas::cuda_bench {

struct CudaAnatomyOptions {
  int prompt_tokens = 128;
  int new_tokens = 64;   ///< traced decode tokens per mode
  bool bf16 = true;
};

/// Runs the traced decode for a synthetic-weight model of `config`; returns the per-mode anatomy
/// (medians over tokens) with "counted" metrics suitable for a record. Throws atlas::Error when
/// CUPTI is unavailable.
nlohmann::json run_cuda_decode_anatomy(const engine::ModelConfig& config, const CudaAnatomyOptions& opts,
                                       double copy_bytes_per_s);

}  // namespace atlas::cuda_bench
