#include "engine/cuda/launch_tape.hpp"

#include <nvtx3/nvToolsExt.h>

#include <string>

#include "kernels/check.hpp"

namespace atlas::engine::cuda {

namespace {
// NVTX wants NUL-terminated names; the stage names are string_views over literals.
const char* nvtx_name(Stage s) {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i < kStageCount; ++i) v.emplace_back(to_string(static_cast<Stage>(i)));
    return v;
  }();
  return names[static_cast<std::size_t>(s)].c_str();
}
}  // namespace

void LaunchTape::push(Stage s) {
  if (eager()) nvtxRangePushA(nvtx_name(s));
}

void LaunchTape::pop() {
  if (eager()) nvtxRangePop();
}

void LaunchTape::record(Stage s) {
  stages_.push_back(s);
  if (eager()) {
    if (counters_) ++counters_->kernel_launches;
    return;
  }
  // Capturing one stream: the node just added is the capture's only dependency (a chain).
  cudaStreamCaptureStatus status;
  const cudaGraphNode_t* deps = nullptr;
  std::size_t n_deps = 0;
  ATLAS_CUDA_CHECK(cudaStreamGetCaptureInfo(stream_, &status, nullptr, nullptr, &deps, nullptr, &n_deps));
  nodes_.push_back({n_deps == 1 ? deps[0] : nullptr, s});
}

void LaunchTape::copy_d2h(Stage s, void* host, const void* device, std::size_t bytes) {
  push(s);
  ATLAS_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_));
  pop();
  host_events_.push_back({s, HostEvent::Kind::d2h});
  if (counters_) {
    ++counters_->d2h_copies;
    counters_->d2h_bytes += static_cast<std::int64_t>(bytes);
  }
}

void LaunchTape::copy_h2d(Stage s, void* device, const void* host, std::size_t bytes) {
  push(s);
  ATLAS_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_));
  pop();
  host_events_.push_back({s, HostEvent::Kind::h2d});
  if (counters_) {
    ++counters_->h2d_copies;
    counters_->h2d_bytes += static_cast<std::int64_t>(bytes);
  }
}

void LaunchTape::host_sync(Stage s) {
  if (!eager()) throw kernels::KernelError("a block synchronised with the host while a decode step was being captured");
  push(s);
  if (wait_) wait_->wait(stream_);
  else ATLAS_CUDA_CHECK(cudaStreamSynchronize(stream_));
  pop();
  host_events_.push_back({s, HostEvent::Kind::sync});
  if (counters_) ++counters_->host_syncs;
}

}  // namespace atlas::engine::cuda
