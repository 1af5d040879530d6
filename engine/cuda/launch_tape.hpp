#pragma once
// The launch tape of a decode step or prefill chunk: every kernel a block launches goes through
// it, so the decoder knows each kernel's stage in launch order (for CUPTI attribution and the
// anatomy's launches per stage), counts host-issued launches, opens one NVTX range per stage
// when launching eagerly (a replayed graph gets one range per step from the decoder), and,
// while a stream is being captured, records the graph node each kernel became.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/cuda/host_wait.hpp"
#include "engine/stage.hpp"

namespace atlas::engine::cuda {

/// A kernel node of a captured decode graph and the stage it belongs to (recorded at capture
/// time, for tracers that attribute graph kernels by node id).
struct GraphKernelNode {
  cudaGraphNode_t node = nullptr;  ///< in the captured cudaGraph_t (not the executable's clone)
  Stage stage = Stage::embed;
};

/// Host-side tallies of what the decoder asked of the driver (CUPTI measures the same
/// independently in the decode-anatomy suite).
struct DecodeCounters {
  std::int64_t decode_steps = 0;
  std::int64_t graph_steps = 0;      ///< decode steps run by graph replay
  std::int64_t eager_steps = 0;
  std::int64_t graph_launches = 0;
  std::int64_t graph_captures = 0;   ///< (re-)captures: one per context-length bucket met
  std::int64_t kernel_launches = 0;  ///< kernels launched from the host (eager and prefill)
  std::int64_t host_syncs = 0;
  std::int64_t h2d_copies = 0, d2h_copies = 0;  ///< host-issued or replayed copies
  std::int64_t h2d_bytes = 0, d2h_bytes = 0;
  std::int64_t prefill_calls = 0, prefill_tokens = 0;
  /// Prefill tokens run as decode steps (models with a block that has no chunked prefill); their
  /// copies and syncs are counted above, their steps are not decode steps.
  std::int64_t prefill_steps = 0;
};

/// A copy or host sync a block asked for inside a step, in the order it was enqueued (the
/// decoder's own token upload and result download are not among them).
struct HostEvent {
  enum class Kind { h2d, d2h, sync };
  Stage stage = Stage::embed;
  Kind kind = Kind::sync;
};

class LaunchTape {
 public:
  enum class Mode { eager, capture };
  /// `counters` (may be null) gets the eager kernel launches and every copy and host sync a
  /// block asks for through the tape; `wait` (may be null: a stream sync) is how host_sync waits.
  LaunchTape(cudaStream_t stream, Mode mode, DecodeCounters* counters, const HostWait* wait = nullptr)
      : stream_(stream), mode_(mode), counters_(counters), wait_(wait) {}

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

  /// A copy between pinned host memory and the device inside stage `s` (a block that needs the
  /// host mid-step, e.g. MoE routing on the host), counted.
  void copy_d2h(Stage s, void* host, const void* device, std::size_t bytes);
  void copy_h2d(Stage s, void* device, const void* host, std::size_t bytes);
  /// A stream synchronisation inside stage `s`, counted. Not allowed while capturing (a block
  /// that syncs must veto capture): throws KernelError then.
  void host_sync(Stage s);

  const std::vector<Stage>& stages() const { return stages_; }
  std::vector<Stage> take_stages() { return std::move(stages_); }
  std::vector<GraphKernelNode> take_nodes() { return std::move(nodes_); }
  /// The blocks' copies and syncs so far, in order: what lets a tracer charge a mid-step copy
  /// to the stage that made it rather than to the step's own upload or download.
  std::vector<HostEvent> take_host_events() { return std::move(host_events_); }

 private:
  void push(Stage s);
  void pop();
  void record(Stage s);

  cudaStream_t stream_;
  Mode mode_;
  DecodeCounters* counters_;
  const HostWait* wait_;
  std::vector<Stage> stages_;
  std::vector<GraphKernelNode> nodes_;
  std::vector<HostEvent> host_events_;
};

}  // namespace atlas::engine::cuda
