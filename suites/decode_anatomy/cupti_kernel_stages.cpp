#ifdef ATLAS_HAVE_CUDA
#include "suites/decode_anatomy/cupti_kernel_stages.hpp"

#include <algorithm>

#include "engine/cuda/cuda_decoder.hpp"

namespace atlas::suites {

std::string_view to_string(StageAttribution a) {
  switch (a) {
    case StageAttribution::graph_node_id: return "graph_node_id";
    case StageAttribution::launch_order: return "launch_order";
    case StageAttribution::none: break;
  }
  return "none";
}

GraphStageMap::GraphStageMap(const engine::cuda::CudaDecoder& dec, const CuptiTracer& tracer) {
  for (const auto& n : dec.graph_kernel_nodes())
    if (n.node != nullptr) by_id_[CuptiTracer::node_id(n.node)] = n.stage;
  for (const auto& [clone, original] : tracer.node_clones()) {
    auto it = by_id_.find(original);
    if (it != by_id_.end()) by_id_.emplace(clone, it->second);
  }
}

const engine::Stage* GraphStageMap::find(std::uint64_t node_id) const {
  auto it = by_id_.find(node_id);
  return it == by_id_.end() ? nullptr : &it->second;
}

KernelStages attribute_stages(const TraceWindow& w, const GraphStageMap& graph,
                              const std::vector<engine::Stage>& launch_order) {
  KernelStages out;
  if (w.kernels.empty()) return out;
  bool by_node = true;
  for (const auto& k : w.kernels) {
    const engine::Stage* s = k.graph_node_id != 0 ? graph.find(k.graph_node_id) : nullptr;
    if (s == nullptr) {
      by_node = false;
      break;
    }
    out.stage.push_back(*s);
  }
  if (by_node) {
    out.how = StageAttribution::graph_node_id;
    return out;
  }
  out.stage.clear();
  if (w.kernels.size() == launch_order.size()) {
    out.stage = launch_order;
    out.how = StageAttribution::launch_order;
  }
  return out;
}

std::vector<double> exclusive_kernel_ns(const TraceWindow& w) {
  std::vector<double> ns;
  ns.reserve(w.kernels.size());
  std::uint64_t prev_end = w.kernels.empty() ? 0 : w.kernels.front().start;
  for (const auto& k : w.kernels) {
    const std::uint64_t from = std::max(k.start, prev_end);
    ns.push_back(k.end > from ? static_cast<double>(k.end - from) : 0.0);
    prev_end = std::max(prev_end, k.end);
  }
  return ns;
}

WindowStageKernels stage_kernels(const TraceWindow& w, const GraphStageMap& graph,
                                 const std::vector<engine::Stage>& launch_order) {
  const KernelStages ks = attribute_stages(w, graph, launch_order);
  const std::vector<double> ns = exclusive_kernel_ns(w);
  WindowStageKernels out;
  out.how = ks.how;
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    StageKernels& s = out.by_stage[ks.stage.empty() ? "unattributed" : std::string(engine::to_string(ks.stage[i]))];
    s.ns += ns[i];
    s.kernels += 1;
    if (w.kernels[i].graph_id != 0) s.graph_kernels += 1;
  }
  return out;
}

}  // namespace atlas::suites
#endif  // ATLAS_HAVE_CUDA
