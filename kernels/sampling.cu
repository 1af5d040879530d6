#include "kernels/sampling.hpp"

#include <algorithm>
#include <climits>

#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {

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

/// Standard Gumbel noise for index i of draw `seed`: -log(-log(u)), u = (x + 0.5) / 2^23 with
/// x a 23-bit counter hash, so u is exact and strictly inside (0, 1) and the noise is finite
/// (|g| < 17). With 24 bits, x + 0.5 rounds to 2^24 for the largest x: u = 1, g = +inf, and
/// that token won whatever its logit (~0.9% of draws over a 152k vocabulary).
__device__ __forceinline__ float gumbel(std::uint64_t seed, int i) {
  const std::uint64_t h = dev::splitmix64(seed ^ dev::splitmix64(static_cast<std::uint64_t>(i)));
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

}  // namespace

void argmax(const float* v, int n, int* out, void* scratch, cudaStream_t s) {
  sample_token(v, n, nullptr, out, scratch, s);
}

void sample_token(const float* v, int n, const DeviceSampling* params, int* out, void* scratch, cudaStream_t s) {
  const int blocks = std::max(1, std::min(kArgmaxBlocks, (n + kArgmaxThreads - 1) / kArgmaxThreads));
  launch_pdl(argmax_kernel, dim3(blocks), dim3(kArgmaxThreads), 0, s, v, n, params, out,
             static_cast<ArgmaxScratch*>(scratch));
}

std::size_t argmax_scratch_bytes() { return sizeof(ArgmaxScratch); }

}  // namespace atlas::kernels
