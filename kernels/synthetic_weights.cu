#include "kernels/synthetic_weights.hpp"

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {

/// Row i of out is source row (row_ids ? row_ids[i] : first_row + i) of a synthetic tensor; value
/// k = offset + scale * u, u = ((splitmix64(stream + k) >> 40) - 2^23) / 2^23 (exact), the product
/// rounded before the sum (engine/formats/synthetic_weights.hpp, what the host computes).
__global__ void synthetic_kernel(float* __restrict__ out, int rows, int cols, const int* __restrict__ row_ids,
                                 std::int64_t first_row, std::uint64_t stream, float scale, float offset) {
  const size_t total = static_cast<size_t>(rows) * cols;
  for (size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t i = idx / cols;
    const int c = static_cast<int>(idx % cols);
    const std::int64_t row = row_ids ? row_ids[i] : first_row + static_cast<std::int64_t>(i);
    const std::uint64_t k = static_cast<std::uint64_t>(row) * static_cast<std::uint64_t>(cols) + c;
    const std::uint64_t h = dev::splitmix64(stream + k);
    const float u = static_cast<float>(static_cast<std::int64_t>(h >> 40) - (1 << 23)) * (1.0f / 8388608.0f);
    out[idx] = __fadd_rn(offset, __fmul_rn(scale, u));
  }
}

}  // namespace

void synthetic_rows(float* out, int rows, int cols, const int* row_ids, std::int64_t first_row, std::uint64_t stream,
                    float scale, float offset, cudaStream_t s) {
  if (rows <= 0 || cols <= 0) return;
  const int blocks = grid_stride_blocks(static_cast<size_t>(rows) * cols, 256);
  synthetic_kernel<<<blocks, 256, 0, s>>>(out, rows, cols, row_ids, first_row, stream, scale, offset);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
