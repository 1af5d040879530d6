#pragma once
// Which decode stage each traced kernel of a step belongs to. Graph replays: through the node
// ids the decoder recorded at capture time (CUPTI gives every graph kernel record the id of its
// node in the executable graph; the tracer maps those clones back to the captured nodes).
// Eager steps: by launch order, which is the order the decoder enqueued its stages in.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/stage.hpp"
#include "suites/decode_anatomy/cupti_tracer.hpp"

namespace atlas::engine::cuda { class CudaDecoder; }

namespace atlas::suites {

enum class StageAttribution { graph_node_id, launch_order, none };
std::string_view to_string(StageAttribution a);

/// CUPTI node id -> stage for every kernel node of the decoder's captured graphs, and for the
/// clones of those nodes the tracer saw being instantiated.
class GraphStageMap {
 public:
  GraphStageMap() = default;
  GraphStageMap(const engine::cuda::CudaDecoder& dec, const CuptiTracer& tracer);
  /// Null when the id is not a known kernel node.
  const engine::Stage* find(std::uint64_t node_id) const;
  std::size_t size() const { return by_id_.size(); }

 private:
  std::unordered_map<std::uint64_t, engine::Stage> by_id_;
};

struct KernelStages {
  std::vector<engine::Stage> stage;  ///< one per kernel of the window; empty when `how` is none
  StageAttribution how = StageAttribution::none;
};

/// Graph kernels by node id when every kernel of the window has a known node; otherwise by
/// launch order when the window ran exactly the step's kernel count; otherwise none.
KernelStages attribute_stages(const TraceWindow& w, const GraphStageMap& graph,
                              const std::vector<engine::Stage>& launch_order);

/// GPU ns charged to each kernel of the window (sorted by start), exclusively: with PDL a
/// kernel starts while its predecessor drains, so a kernel counts from max(its start, the
/// latest end before it) to its end, and overlapping time is counted once.
std::vector<double> exclusive_kernel_ns(const TraceWindow& w);

/// A stage's kernels in one window.
struct StageKernels {
  double ns = 0;          ///< exclusive GPU time (exclusive_kernel_ns)
  int kernels = 0;
  int graph_kernels = 0;  ///< of them, kernels of a replayed graph
};
struct WindowStageKernels {
  std::map<std::string, StageKernels> by_stage;  ///< stage name, or "unattributed"
  StageAttribution how = StageAttribution::none;
};
/// A window's kernels charged to their stages (attribute_stages, then exclusive_kernel_ns);
/// "unattributed" holds them all when no attribution applies. The one reading of a window's
/// kernels by stage: the decode-anatomy suite's CUPTI source and atlas-cuda-bench's anatomy
/// (tools/cuda-bench/token_anatomy.cpp) both use it.
WindowStageKernels stage_kernels(const TraceWindow& w, const GraphStageMap& graph,
                                 const std::vector<engine::Stage>& launch_order);

}  // namespace atlas::suites
