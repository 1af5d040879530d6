#pragma once
// RAII owners of the decoder's CUDA stream, events and cuBLAS handle: released with the decoder, and also
// when its constructor throws after creating them (a load that fails late, e.g. a context the
// attention kernels cannot take, must not leak a stream per attempt). Each converts to the raw
// handle, so call sites pass it as before.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/check.hpp"

namespace atlas::engine::cuda {

class CudaStream {
 public:
  CudaStream() = default;
  ~CudaStream() { if (s_) cudaStreamDestroy(s_); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  /// A non-blocking stream (no implicit sync with the legacy default stream). Throws KernelError.
  void create() { ATLAS_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// An event for host waits on a point in a stream. Created by create(); timing is off unless the
/// flags ask for it.
class CudaEvent {
 public:
  CudaEvent() = default;
  ~CudaEvent() { if (e_) cudaEventDestroy(e_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  /// `flags`: cudaEventCreateWithFlags' flags (e.g. cudaEventDisableTiming | cudaEventBlockingSync).
  /// Throws KernelError.
  void create(unsigned flags = cudaEventDisableTiming) { ATLAS_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  operator cudaEvent_t() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

class CublasHandle {
 public:
  CublasHandle() = default;
  ~CublasHandle() { if (h_) cublasDestroy(h_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  /// Throws KernelError naming the cuBLAS status.
  void create() {
    if (const cublasStatus_t st = cublasCreate(&h_); st != CUBLAS_STATUS_SUCCESS)
      throw kernels::KernelError(std::string("cublasCreate failed: ") + cublasGetStatusName(st));
  }
  operator cublasHandle_t() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

}  // namespace atlas::engine::cuda
