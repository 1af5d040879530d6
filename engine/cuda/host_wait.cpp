#include "engine/cuda/host_wait.hpp"

#include "engine/error.hpp"
#include "kernels/check.hpp"

namespace atlas::engine::cuda {

SyncMode parse_sync_mode(std::string_view value, const std::string& source) {
  if (value == "stream" || value.empty()) return SyncMode::stream;
  if (value == "spin") return SyncMode::spin;
  if (value == "blocking") return SyncMode::blocking;
  throw EngineError(source + ": sync mode '" + std::string(value) + "': one of stream, spin, blocking");
}

std::string_view to_string(SyncMode m) {
  switch (m) {
    case SyncMode::spin: return "spin";
    case SyncMode::blocking: return "blocking";
    case SyncMode::stream: break;
  }
  return "stream";
}

HostWait::HostWait(SyncMode mode) : mode_(mode) {
  spin_.create();
  blocking_.create(cudaEventDisableTiming | cudaEventBlockingSync);
}

void HostWait::wait(cudaStream_t stream) const {
  switch (mode_) {
    case SyncMode::stream:
      ATLAS_CUDA_CHECK(cudaStreamSynchronize(stream));
      return;
    case SyncMode::spin: {
      ATLAS_CUDA_CHECK(cudaEventRecord(spin_, stream));
      cudaError_t e;
      while ((e = cudaEventQuery(spin_)) == cudaErrorNotReady) {
      }
      ATLAS_CUDA_CHECK(e);
      ATLAS_CUDA_CHECK(cudaEventSynchronize(spin_));  // returns at once: counted like the others
      return;
    }
    case SyncMode::blocking:
      ATLAS_CUDA_CHECK(cudaEventRecord(blocking_, stream));
      ATLAS_CUDA_CHECK(cudaEventSynchronize(blocking_));
      return;
  }
}

}  // namespace atlas::engine::cuda
