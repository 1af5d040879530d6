#pragma once
// How the host waits for the device mid-step and at the end of a step: the investigation's plan
// item 2. Under the runtime's default schedule (cudaDeviceScheduleAuto) a stream sync spins when
// the host has more cores than GPUs, so a per-MoE-layer sync costs a busy core, not a wake-up;
// with blocking sync the thread sleeps on an interrupt and each wait adds the wake-up latency.
// The three modes measure the difference on the same decode step (CUDA Runtime API,
// cudaEventBlockingSync / cudaStreamSynchronize / cudaEventQuery).
#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "engine/cuda/stream.hpp"

namespace atlas::engine::cuda {

enum class SyncMode {
  stream,    ///< cudaStreamSynchronize under the device's schedule flags (the default)
  spin,      ///< an event recorded on the stream, polled with cudaEventQuery until done
  blocking,  ///< an event made with cudaEventBlockingSync: the thread sleeps until it fires
};

/// "stream" | "spin" | "blocking"; throws EngineError naming `source` and the value otherwise.
SyncMode parse_sync_mode(std::string_view value, const std::string& source);
std::string_view to_string(SyncMode m);

/// Waits for all work enqueued on a stream, as its mode says. Every mode ends in one
/// *Synchronize call (after a spin it returns at once), so a tracer counts the same host syncs
/// per step whichever mode runs. Owns its two events (released also when the second one fails to
/// be created). Not copyable.
class HostWait {
 public:
  /// Throws kernels::KernelError when an event cannot be created.
  explicit HostWait(SyncMode mode = SyncMode::stream);

  SyncMode mode() const { return mode_; }
  void set_mode(SyncMode m) { mode_ = m; }
  /// Blocks until `stream`'s work is done. Throws kernels::KernelError on a CUDA error.
  void wait(cudaStream_t stream) const;

 private:
  SyncMode mode_;
  CudaEvent spin_, blocking_;
};

}  // namespace atlas::engine::cuda
