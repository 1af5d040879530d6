#pragma once
// The launch tape of a decode step or prefill chunk: every kernel a block launches goes through
// it, so the decoder knows each kernel's stage in launch order (for CUPTI attribution and the
// anatomy's launches per stage), counts host-issued launches, opens one NVTX range per stage
// when launching eagerly (a replayed graph gets one range per step from the decoder), and,
// while a stream is being captured, records the graph node each kernel became.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "engine/stage.hpp"

namespace atlas::engine::cuda {

/// A kernel node of a captured decode graph and the stage it belongs to (recorded at capture
/// time, for tracers that attribute graph kernels by node id).
struct GraphKernelNode {
  cudaGraphNode_t node = nullptr;  ///< in the captured cudaGraph_t (not the executable's clone)
  Stage stage = Stage::embed;
};

class LaunchTape {
 public:
  enum class Mode { eager, capture };
  /// `launches` (may be null) is incremented per eager kernel launch.
  LaunchTape(cudaStream_t stream, Mode mode, std::int64_t* launches) : stream_(stream), mode_(mode), launches_(launches) {}

  cudaStream_t stream() const { return stream_; }
  bool eager() const { return mode_ == Mode::eager; }

  /// Runs `enqueue` (which launches exactly one kernel on stream()) as stage `s`.
  template <typename F>
  void kernel(Stage s, F&& enqueue) {
    push(s);
    enqueue();
    pop();
    record(s);
  }
  /// Runs `enqueue` (stream work that is not a kernel, e.g. a memset, or a library call such
  /// as cuBLAS whose kernels the tape does not count) inside stage `s`'s NVTX range.
  template <typename F>
  void work(Stage s, F&& enqueue) {
    push(s);
    enqueue();
    pop();
  }

  const std::vector<Stage>& stages() const { return stages_; }
  std::vector<Stage> take_stages() { return std::move(stages_); }
  std::vector<GraphKernelNode> take_nodes() { return std::move(nodes_); }

 private:
  void push(Stage s);
  void pop();
  void record(Stage s);

  cudaStream_t stream_;
  Mode mode_;
  std::int64_t* launches_;
  std::vector<Stage> stages_;
  std::vector<GraphKernelNode> nodes_;
};

}  // namespace atlas::engine::cuda
