#pragma once
// Device helpers shared by the kernels: element conversion, 16-byte vector loads, reductions.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace atlas::kernels::dev {

template <typename T> __device__ __forceinline__ float to_f32(T v);
template <> __device__ __forceinline__ float to_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ float to_f32<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/// Elements of T in one 16-byte vector.
template <typename T> inline constexpr int kVec = 16 / sizeof(T);

/// Streaming 16-byte load of read-once data (weights): no L1 allocation.
__device__ __forceinline__ uint4 ld_stream(const void* p) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  return r;
}

/// Unpacks a 16-byte vector into kVec<T> floats.
template <typename T> __device__ __forceinline__ void unpack(uint4 v, float* out);
template <> __device__ __forceinline__ void unpack<float>(uint4 v, float* o) {
  o[0] = __uint_as_float(v.x); o[1] = __uint_as_float(v.y);
  o[2] = __uint_as_float(v.z); o[3] = __uint_as_float(v.w);
}
template <> __device__ __forceinline__ void unpack<__nv_bfloat16>(uint4 v, float* o) {
  // bf16 -> f32 is the 16 high bits of the f32.
  o[0] = __uint_as_float(v.x << 16); o[1] = __uint_as_float(v.x & 0xffff0000u);
  o[2] = __uint_as_float(v.y << 16); o[3] = __uint_as_float(v.y & 0xffff0000u);
  o[4] = __uint_as_float(v.z << 16); o[5] = __uint_as_float(v.z & 0xffff0000u);
  o[6] = __uint_as_float(v.w << 16); o[7] = __uint_as_float(v.w & 0xffff0000u);
}

/// Dot product of two 16-byte vectors of T, accumulated into acc in float32.
template <typename T> __device__ __forceinline__ float dot16(uint4 a, uint4 b, float acc) {
  float fa[kVec<T>], fb[kVec<T>];
  unpack<T>(a, fa);
  unpack<T>(b, fb);
#pragma unroll
  for (int i = 0; i < kVec<T>; ++i) acc = fmaf(fa[i], fb[i], acc);
  return acc;
}

/// splitmix64's output function (Steele, Lea & Flood 2014; Vigna's splitmix64.c): a counter
/// hash, the same on the device as on the host (engine/formats/synthetic_weights.hpp). The
/// sampler's Gumbel noise and the synthetic weights draw from it.
__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Sum over the block; every thread gets the result. `scratch` holds >= 32 floats.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = lane < nwarps ? scratch[lane] : 0.0f;
  return warp_sum(r);
}
__device__ __forceinline__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float r = lane < nwarps ? scratch[lane] : -INFINITY;
  return warp_max(r);
}

/// Keys [t0, t1) of slice `split` when a KV length `len` (= pos + 1) is cut into S slices of
/// ceil(len / S) keys; the last slices are shorter or empty (t1 <= t0). Both decode attention
/// kernels (split-K and cluster) slice this way.
struct KeySlice {
  int t0, t1;
};
__device__ __forceinline__ KeySlice key_slice(int len, int S, int split) {
  const int chunk = (len + S - 1) / S;
  const int t0 = split * chunk;
  return {t0, min(len, t0 + chunk)};
}

/// cos and sin of RoPE pair i's angle at `pos`, theta_i = pos * base^(-2i/d) (llama2.c run.c,
/// HF Qwen3RotaryEmbedding). Every kernel that rotates uses this one expression, so prefill and
/// decode rotate by the same angles (the rows they write may still differ in the last bit where
/// their RMSNorm sums run in a different order).
__device__ __forceinline__ void rope_cos_sin(int i, int d, int pos, float base, float* c, float* s) {
  const float freq = 1.0f / powf(base, (2.0f * i) / static_cast<float>(d));
  sincosf(static_cast<float>(pos) * freq, s, c);
}

/// RoPE on one head by one warp: `in` holds the head's d values (already normalised),
/// pairs are (2i, 2i+1) when interleaved, else (i, i + d/2) (Hugging Face rotate_half).
template <typename F>
__device__ __forceinline__ void rope_pairs(int d, int pos, float base, bool interleaved, F&& pair) {
  const int lane = threadIdx.x & 31;
  for (int i = lane; i < d / 2; i += 32) {
    float s, c;
    rope_cos_sin(i, d, pos, base, &c, &s);
    const int a = interleaved ? 2 * i : i;
    const int b = interleaved ? 2 * i + 1 : i + d / 2;
    pair(a, b, c, s);
  }
}

}  // namespace atlas::kernels::dev
