#include "kernels/elementwise.hpp"

#include <cuda_bf16.h>

#include <string>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {

template <typename W>
__global__ void embed_kernel(const W* __restrict__ table, int ld, int dim, const int* __restrict__ tokens, int n,
                             float* __restrict__ x, RopeTable rope) {
  dev::pdl_trigger();
  dev::pdl_wait();  // after it, no kernel of the previous step still reads the RoPE table
  if (rope.out != nullptr && blockIdx.x == 0 && blockIdx.y == 0) {
    const int pos = *rope.pos;
    for (int p = threadIdx.x; p < rope.head_dim / 2; p += blockDim.x)
      dev::rope_cos_sin(p, rope.head_dim, pos, rope.base, &rope.out[2 * p], &rope.out[2 * p + 1]);
  }
  const int i = blockIdx.y;
  if (i >= n) return;
  const W* row = table + static_cast<size_t>(tokens[i]) * ld;
  for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < dim; c += gridDim.x * blockDim.x)
    x[static_cast<size_t>(i) * dim + c] = dev::to_f32(row[c]);
}

template <typename W>
__global__ void rmsnorm_rows_kernel(const float* __restrict__ x, const float* __restrict__ g, float eps, int dim,
                                    W* __restrict__ out, int ld) {
  __shared__ float scratch[32];
  const float* xr = x + static_cast<size_t>(blockIdx.x) * dim;
  W* o = out + static_cast<size_t>(blockIdx.x) * ld;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) ss += xr[i] * xr[i];
  ss = dev::block_sum(ss, scratch);
  const float inv = rsqrtf(ss / static_cast<float>(dim) + eps);
  for (int i = threadIdx.x; i < ld; i += blockDim.x)
    o[i] = dev::from_f32<W>(i < dim ? g[i] * (xr[i] * inv) : 0.0f);
}

template <typename W>
__global__ void swiglu_kernel(const W* __restrict__ gu, int n, int hidden, W* __restrict__ out, int ld) {
  const size_t total = static_cast<size_t>(n) * ld;
  for (size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t i = idx / ld;
    const int j = static_cast<int>(idx % ld);
    float v = 0.0f;
    if (j < hidden) {
      const float g = dev::to_f32(gu[i * 2 * hidden + 2 * j]), u = dev::to_f32(gu[i * 2 * hidden + 2 * j + 1]);
      v = g / (1.0f + expf(-g)) * u;
    }
    out[idx] = dev::from_f32<W>(v);
  }
}

}  // namespace

namespace {
void launch_embed(ElemType wtype, const void* table, int ld, int dim, const int* tokens, int n, float* x,
                  const RopeTable& rope, cudaStream_t s) {
  const dim3 grid((dim + 255) / 256, n);
  if (wtype == ElemType::bf16)
    launch_pdl(embed_kernel<__nv_bfloat16>, grid, dim3(256), 0, s, static_cast<const __nv_bfloat16*>(table), ld, dim,
               tokens, n, x, rope);
  else
    launch_pdl(embed_kernel<float>, grid, dim3(256), 0, s, static_cast<const float*>(table), ld, dim, tokens, n, x, rope);
}
}  // namespace

void embed_token(ElemType wtype, const void* table, int ld, int dim, const int* token, float* x, cudaStream_t s) {
  launch_embed(wtype, table, ld, dim, token, 1, x, RopeTable{}, s);
}

void embed_token(ElemType wtype, const void* table, int ld, int dim, const int* token, float* x, const RopeTable& rope,
                 cudaStream_t s) {
  if (rope.out == nullptr || rope.pos == nullptr || rope.head_dim <= 0 || rope.head_dim % 2 != 0)
    throw KernelError("embed_token: the RoPE table needs pos, out and an even head_dim, got head_dim " +
                      std::to_string(rope.head_dim));
  launch_embed(wtype, table, ld, dim, token, 1, x, rope, s);
}

void embed_rows(ElemType wtype, const void* table, int ld, int dim, const int* tokens, int n, float* x, cudaStream_t s) {
  launch_embed(wtype, table, ld, dim, tokens, n, x, RopeTable{}, s);
}

void rmsnorm_rows(ElemType wtype, const float* x, const float* g, float eps, int n, int dim, void* out, int ld,
                  cudaStream_t s) {
  if (wtype == ElemType::bf16)
    rmsnorm_rows_kernel<<<n, 256, 0, s>>>(x, g, eps, dim,
                                          static_cast<__nv_bfloat16*>(out), ld);
  else
    rmsnorm_rows_kernel<<<n, 256, 0, s>>>(x, g, eps, dim, static_cast<float*>(out), ld);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

void swiglu_rows(ElemType wtype, const void* gu, int n, int hidden, void* out, int ld, cudaStream_t s) {
  const int blocks = grid_stride_blocks(static_cast<size_t>(n) * ld, 256);
  if (wtype == ElemType::bf16)
    swiglu_kernel<<<blocks, 256, 0, s>>>(static_cast<const __nv_bfloat16*>(gu), n, hidden,
                                         static_cast<__nv_bfloat16*>(out), ld);
  else
    swiglu_kernel<<<blocks, 256, 0, s>>>(static_cast<const float*>(gu), n, hidden, static_cast<float*>(out), ld);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
