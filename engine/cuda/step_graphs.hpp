#pragma once
// Capture and replay of decode steps: one CUDA graph per key — the context bucket (the attention
// split count is fixed inside a graph), + 1 for a step that also computes log-probabilities —
// captured the first time a step of that key runs and replayed for every later one.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "engine/cuda/launch_tape.hpp"

namespace atlas::engine::cuda {

class StepGraphs {
 public:
  StepGraphs() = default;
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  /// The executable graph of `bucket` (a key: CudaDecoder adds 1 for log-probabilities); captures `enqueue` on `stream` first when there is none
  /// (`enqueue` enqueues one step and returns the kernel nodes it recorded). On an error nothing
  /// half-made stays: the next call captures again.
  cudaGraphExec_t get(int bucket, cudaStream_t stream, const std::function<std::vector<GraphKernelNode>()>& enqueue);
  /// Instantiates every captured graph again (same nodes, new executables).
  void reinstantiate(cudaStream_t stream);
  /// Kernel nodes of every captured graph with their stages, in capture order.
  std::vector<GraphKernelNode> kernel_nodes() const;
  std::int64_t captures() const { return captures_; }
  /// Host milliseconds spent capturing and instantiating, all captures together.
  double capture_ms() const { return capture_ms_; }

 private:
  struct Captured {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    std::vector<GraphKernelNode> kernels;
  };
  static void instantiate(Captured& cap, cudaStream_t stream);
  std::map<int, Captured> graphs_;
  std::int64_t captures_ = 0;
  double capture_ms_ = 0;
};

}  // namespace atlas::engine::cuda
