#pragma once
// RAII owners of device and pinned host memory. All of a backend's memory is allocated at load
// (weights, KV cache, workspace); none in steady-state decode.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "kernels/check.hpp"

namespace atlas::engine::cuda {

/// Device memory (cudaMalloc / cudaFree).
struct DeviceMemory {
  static constexpr const char* kAlloc = "cudaMalloc";
  static cudaError_t alloc(void** p, std::size_t n) { return cudaMalloc(p, n); }
  static void release(void* p) { cudaFree(p); }
};
/// Page-locked host memory (cudaMallocHost / cudaFreeHost).
struct PinnedMemory {
  static constexpr const char* kAlloc = "cudaMallocHost";
  static cudaError_t alloc(void** p, std::size_t n) { return cudaMallocHost(p, n); }
  static void release(void* p) { cudaFreeHost(p); }
};

/// One allocation of `Memory` kind: move-only, released on destruction. Throws KernelError
/// naming the call and the size when the allocation fails.
template <typename Memory>
class CudaAllocation {
 public:
  CudaAllocation() = default;
  explicit CudaAllocation(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ == 0) return;
    if (const cudaError_t e = Memory::alloc(&ptr_, bytes_); e != cudaSuccess) {
      ptr_ = nullptr;
      kernels::throw_cuda(e, (std::string(Memory::kAlloc) + " of " + std::to_string(bytes_) + " bytes").c_str(),
                          __FILE__, __LINE__);
    }
  }
  ~CudaAllocation() { if (ptr_) Memory::release(ptr_); }
  CudaAllocation(CudaAllocation&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  CudaAllocation& operator=(CudaAllocation&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  CudaAllocation(const CudaAllocation&) = delete;
  CudaAllocation& operator=(const CudaAllocation&) = delete;

  void* get() const { return ptr_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

using DeviceBuffer = CudaAllocation<DeviceMemory>;
/// The only kind of host memory a copy in steady-state decode touches.
using PinnedBuffer = CudaAllocation<PinnedMemory>;

/// Hands out 256-byte-aligned slices of one device allocation: the memory plan made concrete.
/// A counting arena (default-constructed) allocates nothing and only sums the sizes, so the
/// same layout code first plans, then places.
class Arena {
 public:
  Arena() = default;  // counting
  explicit Arena(std::size_t bytes) : buf_(bytes), counting_(false) {}
  void* take(std::size_t bytes) {
    const std::size_t at = (used_ + 255) / 256 * 256;
    used_ = at + bytes;
    if (counting_) return nullptr;
    if (used_ > buf_.bytes()) throw kernels::KernelError("cuda arena: memory plan too small");
    return static_cast<char*>(buf_.get()) + at;
  }
  std::size_t used() const { return used_; }
  /// The allocation (null for a counting arena).
  void* base() const { return buf_.get(); }
  bool counting() const { return counting_; }

 private:
  DeviceBuffer buf_;
  bool counting_ = true;
  std::size_t used_ = 0;
};

}  // namespace atlas::engine::cuda
