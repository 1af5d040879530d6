#pragma once
// RAII owners of device and pinned host memory. All of a backend's memory is allocated at load
// (weights, KV cache, workspace); none in steady-state decode.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "kernels/check.hpp"

namespace atlas::engine::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) ATLAS_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Page-locked host memory: the only kind a copy in steady-state decode touches.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) ATLAS_CUDA_CHECK(cudaMallocHost(&ptr_, bytes_));
  }
  ~PinnedBuffer() { if (ptr_) cudaFreeHost(ptr_); }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T> T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

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
  bool counting() const { return counting_; }

 private:
  DeviceBuffer buf_;
  bool counting_ = true;
  std::size_t used_ = 0;
};

}  // namespace atlas::engine::cuda
