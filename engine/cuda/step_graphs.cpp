#include "engine/cuda/step_graphs.hpp"

#include <chrono>

#include "kernels/check.hpp"

namespace atlas::engine::cuda {

StepGraphs::~StepGraphs() {
  for (auto& [b, g] : graphs_) {
    if (g.exec) cudaGraphExecDestroy(g.exec);
    if (g.graph) cudaGraphDestroy(g.graph);
  }
}

cudaGraphExec_t StepGraphs::get(int bucket, cudaStream_t stream,
                                const std::function<std::vector<GraphKernelNode>()>& enqueue) {
  if (auto it = graphs_.find(bucket); it != graphs_.end()) return it->second.exec;
  const auto t0 = std::chrono::steady_clock::now();
  Captured cap;
  ATLAS_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    cap.kernels = enqueue();
  } catch (...) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream, &g);
    if (g) cudaGraphDestroy(g);
    throw;
  }
  ATLAS_CUDA_CHECK(cudaStreamEndCapture(stream, &cap.graph));
  try {
    instantiate(cap, stream);
  } catch (...) {
    cudaGraphDestroy(cap.graph);
    throw;
  }
  const cudaGraphExec_t exec = cap.exec;
  graphs_.emplace(bucket, std::move(cap));
  ++captures_;
  capture_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return exec;
}

// The new executable replaces the old one only once it is instantiated and uploaded; on an
// error the old one (or none) stays and the exception propagates.
void StepGraphs::instantiate(Captured& cap, cudaStream_t stream) {
  cudaGraphExec_t exec = nullptr;
  ATLAS_CUDA_CHECK(cudaGraphInstantiate(&exec, cap.graph, 0));
  if (const cudaError_t e = cudaGraphUpload(exec, stream); e != cudaSuccess) {
    cudaGraphExecDestroy(exec);
    kernels::throw_cuda(e, "cudaGraphUpload(exec, stream)", __FILE__, __LINE__);
  }
  if (cap.exec) ATLAS_CUDA_CHECK(cudaGraphExecDestroy(cap.exec));
  cap.exec = exec;
}

void StepGraphs::reinstantiate(cudaStream_t stream) {
  for (auto& [bucket, cap] : graphs_) instantiate(cap, stream);
  ATLAS_CUDA_CHECK(cudaStreamSynchronize(stream));
}

std::vector<GraphKernelNode> StepGraphs::kernel_nodes() const {
  std::vector<GraphKernelNode> all;
  for (const auto& [bucket, cap] : graphs_) all.insert(all.end(), cap.kernels.begin(), cap.kernels.end());
  return all;
}

}  // namespace atlas::engine::cuda
