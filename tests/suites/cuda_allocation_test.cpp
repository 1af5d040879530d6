// The RAII owner behind DeviceBuffer / PinnedBuffer, with a fake allocator: no device needed.
#ifdef ATLAS_HAVE_CUDA
#include <doctest/doctest.h>

#include <cstdlib>

#include "engine/cuda/device_memory.hpp"
#include "kernels/check.hpp"

namespace {

struct FakeMemory {
  static constexpr const char* kAlloc = "fakeMalloc";
  static inline int live = 0;
  static inline bool fail = false;
  static cudaError_t alloc(void** p, std::size_t n) {
    if (fail) return cudaErrorMemoryAllocation;
    *p = std::malloc(n);
    ++live;
    return cudaSuccess;
  }
  static void release(void* p) {
    std::free(p);
    --live;
  }
};

using Buffer = atlas::engine::cuda::CudaAllocation<FakeMemory>;

}  // namespace

TEST_CASE("CudaAllocation: one release per allocation across moves; a failed allocation names the call and size") {
  {
    Buffer a(64);
    CHECK(FakeMemory::live == 1);
    CHECK(a.bytes() == 64);
    Buffer b(std::move(a));
    CHECK(a.get() == nullptr);
    CHECK(b.get() != nullptr);
    Buffer c(16);
    c = std::move(b);  // swap: b now owns c's old block, both released at scope end
    CHECK(c.bytes() == 64);
    CHECK(FakeMemory::live == 2);
    Buffer empty(0);
    CHECK(empty.get() == nullptr);
  }
  CHECK(FakeMemory::live == 0);
  FakeMemory::fail = true;
  CHECK_THROWS_WITH_AS(Buffer(1 << 20), doctest::Contains("fakeMalloc of 1048576 bytes"), atlas::kernels::KernelError);
  FakeMemory::fail = false;
  CHECK(FakeMemory::live == 0);
}
#endif  // ATLAS_HAVE_CUDA
