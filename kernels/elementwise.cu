#include "kernels/elementwise.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <climits>
#include <string>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {

int blocks_for(size_t n, int threads) {
  const size_t b = (n + threads - 1) / threads;
  return static_cast<int>(b < 65535u * 32u ? b : 65535u * 32u);
}

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

constexpr int kArgmaxBlocks = 128;
constexpr int kArgmaxThreads = 512;

struct ArgmaxScratch {
  float val[kArgmaxBlocks];
  int idx[kArgmaxBlocks];
  int ticket;
};

__device__ __forceinline__ void better_of(float& best, int& bi, float ob, int oi) {
  if (ob > best || (ob == best && oi < bi)) { best = ob; bi = oi; }
}

/// Block-wide (max, lowest index); result valid in thread 0.
__device__ __forceinline__ void block_argmax(float& best, int& bi, float* sv, int* si) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    better_of(best, bi, __shfl_xor_sync(0xffffffffu, best, o), __shfl_xor_sync(0xffffffffu, bi, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
  if (lane == 0) { sv[warp] = best; si[warp] = bi; }
  __syncthreads();
  if (warp == 0) {
    best = lane < nw ? sv[lane] : -INFINITY;
    bi = lane < nw ? si[lane] : INT_MAX;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
      better_of(best, bi, __shfl_xor_sync(0xffffffffu, best, o), __shfl_xor_sync(0xffffffffu, bi, o));
  }
}

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Standard Gumbel noise for index i of draw `seed`: -log(-log(u)), u = (x + 0.5) / 2^23 with
/// x a 23-bit counter hash, so u is exact and strictly inside (0, 1) and the noise is finite
/// (|g| < 17). With 24 bits, x + 0.5 rounds to 2^24 for the largest x: u = 1, g = +inf, and
/// that token won whatever its logit (~0.9% of draws over a 152k vocabulary).
__device__ __forceinline__ float gumbel(std::uint64_t seed, int i) {
  const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
  const float u = (static_cast<float>(h >> 41) + 0.5f) * (1.0f / 8388608.0f);
  return -logf(-logf(u));
}

/// sp == null or sp->temperature == 0: the argmax of v. Otherwise the argmax of v + T * Gumbel
/// noise (= the argmax of v / T + noise, without dividing by a tiny T), which is a draw from
/// softmax(v / T): the Gumbel-max trick.
__global__ void __launch_bounds__(kArgmaxThreads)
argmax_kernel(const float* __restrict__ v, int n, const DeviceSampling* __restrict__ sp, int* __restrict__ out,
              ArgmaxScratch* __restrict__ scr) {
  __shared__ float sv[32];
  __shared__ int si[32];
  __shared__ bool last;
  dev::pdl_trigger();
  dev::pdl_wait();
  float best = -INFINITY;
  int bi = INT_MAX;  // "none yet": loses every comparison
  const int per = (n + gridDim.x - 1) / gridDim.x;
  const int lo = blockIdx.x * per, hi = min(n, lo + per);
  const float temp = sp != nullptr ? sp->temperature : 0.0f;
  if (temp > 0.0f) {
    const std::uint64_t seed = sp->seed;
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      const float x = v[i] + temp * gumbel(seed, i);
      if (x > best) { best = x; bi = i; }
    }
  } else {
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      const float x = v[i];
      if (x > best) { best = x; bi = i; }  // each thread ascends, so '>' keeps its lowest index
    }
  }
  block_argmax(best, bi, sv, si);
  if (threadIdx.x == 0) {
    scr->val[blockIdx.x] = best;
    scr->idx[blockIdx.x] = bi;
    __threadfence();
    last = atomicAdd(&scr->ticket, 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  best = -INFINITY;
  bi = INT_MAX;
  for (int b = threadIdx.x; b < gridDim.x; b += blockDim.x) better_of(best, bi, __ldcg(&scr->val[b]), __ldcg(&scr->idx[b]));
  block_argmax(best, bi, sv, si);
  if (threadIdx.x == 0) {
    *out = bi < n ? bi : 0;
    scr->ticket = 0;
  }
}

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
    const std::uint64_t h = splitmix64(stream + k);
    const float u = static_cast<float>(static_cast<std::int64_t>(h >> 40) - (1 << 23)) * (1.0f / 8388608.0f);
    out[idx] = __fadd_rn(offset, __fmul_rn(scale, u));
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
  const int blocks = blocks_for(static_cast<size_t>(n) * ld, 256);
  if (wtype == ElemType::bf16)
    swiglu_kernel<<<blocks, 256, 0, s>>>(static_cast<const __nv_bfloat16*>(gu), n, hidden,
                                         static_cast<__nv_bfloat16*>(out), ld);
  else
    swiglu_kernel<<<blocks, 256, 0, s>>>(static_cast<const float*>(gu), n, hidden, static_cast<float*>(out), ld);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

void argmax(const float* v, int n, int* out, void* scratch, cudaStream_t s) {
  sample_token(v, n, nullptr, out, scratch, s);
}

void sample_token(const float* v, int n, const DeviceSampling* params, int* out, void* scratch, cudaStream_t s) {
  const int blocks = std::max(1, std::min(kArgmaxBlocks, (n + kArgmaxThreads - 1) / kArgmaxThreads));
  launch_pdl(argmax_kernel, dim3(blocks), dim3(kArgmaxThreads), 0, s, v, n, params, out,
             static_cast<ArgmaxScratch*>(scratch));
}

std::size_t argmax_scratch_bytes() { return sizeof(ArgmaxScratch); }

void convert_rows(ElemType wtype, const float* src, int rows, int cols, void* dst, int ld, int pitch, cudaStream_t s) {
  const int blocks = blocks_for(static_cast<size_t>(rows) * ld, 256);
  if (wtype == ElemType::bf16)
    convert_kernel<<<blocks, 256, 0, s>>>(src, rows, cols, static_cast<__nv_bfloat16*>(dst), ld, pitch);
  else
    convert_kernel<<<blocks, 256, 0, s>>>(src, rows, cols, static_cast<float*>(dst), ld, pitch);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

void synthetic_rows(float* out, int rows, int cols, const int* row_ids, std::int64_t first_row, std::uint64_t stream,
                    float scale, float offset, cudaStream_t s) {
  if (rows <= 0 || cols <= 0) return;
  const int blocks = blocks_for(static_cast<size_t>(rows) * cols, 256);
  synthetic_kernel<<<blocks, 256, 0, s>>>(out, rows, cols, row_ids, first_row, stream, scale, offset);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
