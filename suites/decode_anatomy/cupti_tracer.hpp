#pragma once
// CUPTI activity tracing + runtime/driver API callbacks, with the trace cut into windows (one
// per decoded token) by the caller. Kernels inside CUDA graphs are traced individually
// (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL carries graph kernels with their graph node id).
// One tracer per process at a time (CUPTI allows one subscriber).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace atlas::suites {

struct TracedKernel {
  std::uint64_t start = 0, end = 0;  ///< ns, CUPTI clock
  std::string name;
  std::uint64_t graph_node_id = 0;   ///< 0 outside graphs
  std::uint32_t graph_id = 0;
};

enum class CopyDirection { h2d, d2h, d2d, other };

struct TracedCopy {
  std::uint64_t start = 0, end = 0, bytes = 0;
  CopyDirection direction = CopyDirection::other;
  bool pageable = false;             ///< the host side is pageable (not page-locked) memory
  bool in_graph = false;
};

/// Host API calls seen by the callbacks, by kind.
struct ApiCalls {
  std::int64_t kernel_launches = 0;  ///< cudaLaunchKernel*, cuLaunchKernel* (not graph launches)
  std::int64_t graph_launches = 0;   ///< cudaGraphLaunch / cuGraphLaunch
  std::int64_t syncs = 0;            ///< *Synchronize calls (stream, event, device, context)
  std::int64_t copies = 0;           ///< cudaMemcpy* / cuMemcpy* calls
  std::int64_t memsets = 0;
  std::int64_t mallocs = 0;          ///< cudaMalloc* / cudaFree* / cuMemAlloc* / cuMemFree*
  std::int64_t total = 0;
};

/// Everything traced inside one window.
struct TraceWindow {
  std::uint64_t t0 = 0, t1 = 0;      ///< ns, CUPTI clock (same timebase as activity records)
  std::vector<TracedKernel> kernels;  ///< sorted by start
  std::vector<TracedCopy> copies;
  std::int64_t memsets = 0;
  std::int64_t sync_records = 0;     ///< CUPTI synchronization activity records
  ApiCalls runtime, driver;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;  ///< all GPU activity intervals
};

/// A window's traced copies by direction (d2d and other copies are not counted here).
struct CopyCounts {
  int h2d = 0, d2h = 0;
  double h2d_bytes = 0, d2h_bytes = 0;
  int pageable = 0;  ///< copies of any direction whose host side is pageable
};
CopyCounts count_copies(const TraceWindow& w);

/// A kernel's readable name: demangled, without namespaces, return type or parameter list
/// ("flash_prefill_kernel<128>"); names that do not demangle (cuBLAS's) come back as they are.
std::string short_kernel_name(std::string_view name);

class CuptiTracer {
 public:
  /// Subscribes and enables tracing; throws atlas::Error naming the failing CUPTI call.
  CuptiTracer();
  ~CuptiTracer();
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  void begin_window();
  void end_window();
  /// Flushes CUPTI's buffers and returns the windows with their records (call once, at the end).
  std::vector<TraceWindow> finish();

  /// CUPTI's id of a node of a captured graph. Kernel records of a launched executable carry the
  /// id of the node's clone in that executable; node_clones() maps those back.
  static std::uint64_t node_id(cudaGraphNode_t node);
  /// Clone id -> original node id for every node cloned (graph instantiation) while this
  /// tracer was subscribed.
  std::unordered_map<std::uint64_t, std::uint64_t> node_clones() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace atlas::suites
