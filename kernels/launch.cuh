#pragma once
#include <cuda_runtime.h>

#include <utility>

#include "kernels/check.hpp"
#include "kernels/launch.hpp"

namespace atlas::kernels {

namespace dev {
/// Lets the next kernel in the stream launch now (its pdl_wait still waits for this one).
__device__ __forceinline__ void pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
/// Waits until every earlier kernel in the stream has completed and its writes are visible.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
}  // namespace dev

/// Launches `kernel` with the PDL attribute when enabled (plain launch otherwise); with
/// cluster_x > 0, as thread-block clusters of cluster_x blocks along x.
template <typename... Params, typename... Args>
void launch_pdl_clusters(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                         unsigned cluster_x, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  unsigned n = 0;
  if (pdl_enabled()) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n++].val.programmaticStreamSerializationAllowed = 1;
  }
  if (cluster_x > 0) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = cluster_x;
    attr[n].val.clusterDim.y = 1;
    attr[n++].val.clusterDim.z = 1;
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  ATLAS_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
}

/// Blocks of `threads` for a grid-stride loop over n elements: one element a thread, capped
/// (65535 * 32 blocks) so the grid stays within limits; the loop covers the rest.
inline int grid_stride_blocks(size_t n, int threads) {
  const size_t b = (n + threads - 1) / threads;
  return static_cast<int>(b < 65535u * 32u ? b : 65535u * 32u);
}

template <typename... Params, typename... Args>
void launch_pdl(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream, Args&&... args) {
  launch_pdl_clusters(kernel, grid, block, smem, stream, 0u, std::forward<Args>(args)...);
}

}  // namespace atlas::kernels
