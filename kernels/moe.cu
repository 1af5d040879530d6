#include "kernels/moe.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cfloat>
#include <string>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"

namespace atlas::kernels {
namespace {

constexpr int kTopkThreads = 256;
constexpr int kMaxK = 32;
constexpr int kWarps = 8;  // rows per block in the expert GEMVs (a warp per row)

__global__ void __launch_bounds__(kTopkThreads) moe_topk_kernel(MoeTopkArgs a) {
  extern __shared__ float p[];  // [n_experts]
  __shared__ float red[32];
  __shared__ float best_v[32];
  __shared__ int best_i[32];
  __shared__ int chosen[kMaxK];
  __shared__ float chosen_p[kMaxK];
  const int E = a.n_experts, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int row = blockIdx.x;
  a.logits += static_cast<size_t>(row) * a.logits_ld;
  a.ids += static_cast<size_t>(row) * a.k;
  a.weights += static_cast<size_t>(row) * (a.k + 1);
  if (a.chosen != nullptr) a.chosen += static_cast<size_t>(row) * a.k;
  float mx = -INFINITY;
  for (int e = tid; e < E; e += blockDim.x) {
    p[e] = a.logits[e];
    mx = fmaxf(mx, p[e]);
  }
  mx = dev::block_max(mx, red);
  float sum = 0.0f;
  for (int e = tid; e < E; e += blockDim.x) {
    p[e] = expf(p[e] - mx);
    sum += p[e];
  }
  sum = dev::block_sum(sum, red);
  for (int e = tid; e < E; e += blockDim.x) p[e] /= sum;
  __syncthreads();
  for (int r = 0; r < a.k && a.chosen != nullptr; ++r) {
    if (tid == 0) {
      const int e = min(max(a.chosen[r], 0), E - 1);
      chosen[r] = e;
      chosen_p[r] = p[e];
    }
  }
  __syncthreads();
  for (int r = 0; r < a.k && a.chosen == nullptr; ++r) {
    // Largest remaining probability, the lower id on a tie (a chosen expert is marked -1).
    float v = -1.0f;
    int idx = E;
    for (int e = tid; e < E; e += blockDim.x)
      if (p[e] > v) { v = p[e]; idx = e; }  // ascending e per thread: the first max is the lowest id
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, v, o);
      const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
      if (ov > v || (ov == v && oi < idx)) { v = ov; idx = oi; }
    }
    if (lane == 0) { best_v[warp] = v; best_i[warp] = idx; }
    __syncthreads();
    if (tid == 0) {
      float bv = best_v[0];
      int bi = best_i[0];
      for (int w = 1; w < static_cast<int>(blockDim.x >> 5); ++w)
        if (best_v[w] > bv || (best_v[w] == bv && best_i[w] < bi)) { bv = best_v[w]; bi = best_i[w]; }
      bi = min(bi, E - 1);  // all-NaN logits pick nothing: keep the index in range
      chosen[r] = bi;
      chosen_p[r] = p[bi];
      p[bi] = -1.0f;
    }
    __syncthreads();
  }
  if (tid == 0) {
    float s = 0.0f;
    for (int r = 0; r < a.k; ++r) s += chosen_p[r];
    for (int r = 0; r < a.k; ++r) {
      a.ids[r] = chosen[r];
      a.weights[r] = a.norm_topk ? chosen_p[r] / s : chosen_p[r];
    }
    a.weights[a.k] = a.shared ? 1.0f / (1.0f + expf(-a.logits[E])) : 0.0f;
    if (a.fingerprint != nullptr && a.n_rows == 1) {
      unsigned long long h = *a.fingerprint;
      for (int r = 0; r < a.k; ++r) h = (h ^ static_cast<unsigned long long>(chosen[r] + 1)) * 0x100000001b3ull;
      *a.fingerprint = h;
    }
  }
}

/// The fingerprint of a chunk's rows, in token order (the same FNV-1a as one row at a time).
__global__ void moe_fingerprint_kernel(const int* ids, int n_rows, int k, unsigned long long* fingerprint) {
  unsigned long long h = *fingerprint;
  for (int i = 0; i < n_rows * k; ++i) h = (h ^ static_cast<unsigned long long>(ids[i] + 1)) * 0x100000001b3ull;
  *fingerprint = h;
}

/// Dot of a weight row and x over `ld` elements (a multiple of the vector width) by one warp.
template <typename W>
__device__ __forceinline__ float warp_dot(const W* row, const W* x, int ld) {
  constexpr int V = dev::kVec<W>;
  float acc = 0.0f;
  for (int i = (threadIdx.x & 31) * V; i < ld; i += 32 * V)
    acc = dev::dot16<W>(dev::ld_stream(row + i), *reinterpret_cast<const uint4*>(x + i), acc);
  return dev::warp_sum(acc);
}

template <typename W>
__global__ void __launch_bounds__(kWarps * 32) moe_gate_up_kernel(MoeArgs a) {
  const int slot = blockIdx.y;  // 0..k-1 routed, k shared
  const int t = blockIdx.z;     // token of a prefill chunk
  a.ids += static_cast<size_t>(t) * a.k;
  a.x = static_cast<const W*>(a.x) + static_cast<size_t>(t) * a.x_ld;
  a.h = static_cast<W*>(a.h) + static_cast<size_t>(t) * (a.k + 1) * a.ld_h;
  const bool shared = slot == a.k;
  const MoeExperts& ex = shared ? a.shared : a.routed;
  const int i = blockIdx.x * kWarps + (threadIdx.x >> 5);
  if (i >= ex.hidden) return;
  const size_t expert = shared ? 0 : static_cast<size_t>(a.ids[slot]);
  const W* base = static_cast<const W*>(ex.gate_up) + expert * 2 * ex.hidden * static_cast<size_t>(a.ld_in);
  const W* x = static_cast<const W*>(a.x);
  const float g = warp_dot<W>(base + static_cast<size_t>(2 * i) * a.ld_in, x, a.ld_in);
  const float u = warp_dot<W>(base + static_cast<size_t>(2 * i + 1) * a.ld_in, x, a.ld_in);
  if ((threadIdx.x & 31) == 0)
    static_cast<W*>(a.h)[static_cast<size_t>(slot) * a.ld_h + i] = dev::from_f32<W>(g / (1.0f + expf(-g)) * u);
}

template <typename W>
__global__ void __launch_bounds__(kWarps * 32) moe_down_kernel(MoeArgs a) {
  const int j = blockIdx.x * kWarps + (threadIdx.x >> 5);
  if (j >= a.dim) return;
  const int t = blockIdx.y;  // token of a prefill chunk
  a.ids += static_cast<size_t>(t) * a.k;
  a.weights += static_cast<size_t>(t) * (a.k + 1);
  a.y += static_cast<size_t>(t) * a.y_ld;
  const W* h = static_cast<const W*>(a.h) + static_cast<size_t>(t) * (a.k + 1) * a.ld_h;
  float acc = 0.0f;
  for (int s = 0; s < a.k; ++s) {
    const W* row = static_cast<const W*>(a.routed.down) +
                   (static_cast<size_t>(a.ids[s]) * a.dim + j) * a.routed.ld_hidden;
    acc += a.weights[s] * warp_dot<W>(row, h + static_cast<size_t>(s) * a.ld_h, a.routed.ld_hidden);
  }
  if (a.shared.down != nullptr) {
    const W* row = static_cast<const W*>(a.shared.down) + static_cast<size_t>(j) * a.shared.ld_hidden;
    acc += a.weights[a.k] * warp_dot<W>(row, h + static_cast<size_t>(a.k) * a.ld_h, a.shared.ld_hidden);
  }
  if ((threadIdx.x & 31) == 0) a.y[j] += acc;
}

void check(const MoeArgs& a, const char* what) {
  if (a.n_tokens < 1 || a.n_tokens > 65535 || (a.n_tokens > 1 && (a.x_ld < a.ld_in || a.y_ld < a.dim)))
    throw KernelError(std::string(what) + ": " + std::to_string(a.n_tokens) + " tokens (1..65535) with x_ld " +
                      std::to_string(a.x_ld) + ", y_ld " + std::to_string(a.y_ld));
  if (a.k < 1 || a.k > kMaxK || a.ld_in % 8 != 0 || a.routed.ld_hidden % 8 != 0 ||
      a.ld_h < a.routed.ld_hidden || (a.shared.gate_up != nullptr && a.ld_h < a.shared.ld_hidden))
    throw KernelError(std::string(what) + ": bad shapes (k " + std::to_string(a.k) + ", ld_in " + std::to_string(a.ld_in) +
                      ", ld_h " + std::to_string(a.ld_h) + ")");
}

}  // namespace

void moe_topk(const MoeTopkArgs& a, cudaStream_t stream) {
  if (a.k < 1 || a.k > kMaxK || a.k > a.n_experts)
    throw KernelError("moe_topk: k = " + std::to_string(a.k) + " must be in [1, min(32, n_experts = " +
                      std::to_string(a.n_experts) + ")]");
  if (a.n_rows < 1 || (a.n_rows > 1 && a.logits_ld < a.n_experts))
    throw KernelError("moe_topk: " + std::to_string(a.n_rows) + " rows with logits_ld " + std::to_string(a.logits_ld));
  moe_topk_kernel<<<a.n_rows, kTopkThreads, sizeof(float) * a.n_experts, stream>>>(a);
  ATLAS_CUDA_CHECK(cudaGetLastError());
  if (a.n_rows > 1 && a.fingerprint != nullptr) {
    moe_fingerprint_kernel<<<1, 1, 0, stream>>>(a.ids, a.n_rows, a.k, a.fingerprint);
    ATLAS_CUDA_CHECK(cudaGetLastError());
  }
}

void moe_gate_up(const MoeArgs& a, cudaStream_t stream) {
  check(a, "moe_gate_up");
  const int rows = std::max(a.routed.hidden, a.shared.gate_up ? a.shared.hidden : 0);
  const dim3 grid((rows + kWarps - 1) / kWarps, a.k + (a.shared.gate_up ? 1 : 0), a.n_tokens);
  if (a.wtype == ElemType::bf16) moe_gate_up_kernel<__nv_bfloat16><<<grid, kWarps * 32, 0, stream>>>(a);
  else moe_gate_up_kernel<float><<<grid, kWarps * 32, 0, stream>>>(a);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

void moe_down(const MoeArgs& a, cudaStream_t stream) {
  check(a, "moe_down");
  const dim3 grid((a.dim + kWarps - 1) / kWarps, a.n_tokens);
  if (a.wtype == ElemType::bf16) moe_down_kernel<__nv_bfloat16><<<grid, kWarps * 32, 0, stream>>>(a);
  else moe_down_kernel<float><<<grid, kWarps * 32, 0, stream>>>(a);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
