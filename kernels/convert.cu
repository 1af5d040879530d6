#include "kernels/convert.hpp"

#include <cuda_bf16.h>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {

template <typename W>
__global__ void convert_kernel(const float* __restrict__ src, int rows, int cols, W* __restrict__ dst, int ld,
                               int pitch) {
  const size_t total = static_cast<size_t>(rows) * ld;
  for (size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t r = idx / ld;
    const int c = static_cast<int>(idx % ld);
    dst[r * pitch + c] = dev::from_f32<W>(c < cols ? src[r * cols + c] : 0.0f);
  }
}

}  // namespace

void convert_rows(ElemType wtype, const float* src, int rows, int cols, void* dst, int ld, int pitch, cudaStream_t s) {
  const int blocks = grid_stride_blocks(static_cast<size_t>(rows) * ld, 256);
  if (wtype == ElemType::bf16)
    convert_kernel<<<blocks, 256, 0, s>>>(src, rows, cols, static_cast<__nv_bfloat16*>(dst), ld, pitch);
  else
    convert_kernel<<<blocks, 256, 0, s>>>(src, rows, cols, static_cast<float*>(dst), ld, pitch);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
