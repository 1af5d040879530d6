#include "kernels/logprobs.hpp"

#include <algorithm>
#include <climits>

#include "kernels/check.hpp"

namespace atlas::kernels {
namespace {

constexpr int kBlocks = 64;    // 152k logits: ~2.4k per block, ~9 per thread per pass
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

struct Scratch {
  float max[kBlocks];
  double sum[kBlocks];  ///< sum of exp(v - max[b]) over the block's slice
  int nan[kBlocks];
  float key[kBlocks][kMaxLogprobs];  ///< each block's top list, best first
  int id[kBlocks][kMaxLogprobs];     ///< INT_MAX: the slice had fewer entries
  int ticket;
};

/// The rank order of engine::raw_logprobs: a NaN ranks as -inf; a higher logit first, then the lower id.
__device__ __forceinline__ float rank_key(float v) { return isnan(v) ? -INFINITY : v; }
__device__ __forceinline__ bool before(float ka, int ia, float kb, int ib) { return ka > kb || (ka == kb && ia < ib); }

/// The best (key, id) over the block by before(); every thread gets it.
__device__ void block_best(float& k, int& i, float* sk, int* si) {
  for (int o = 16; o > 0; o >>= 1) {
    const float ok = __shfl_down_sync(0xffffffffu, k, o);
    const int oi = __shfl_down_sync(0xffffffffu, i, o);
    if (before(ok, oi, k, i)) { k = ok; i = oi; }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // the shared slots may still be read by the previous call
  if (lane == 0) { sk[warp] = k; si[warp] = i; }
  __syncthreads();
  k = sk[0];
  i = si[0];
  for (int w = 1; w < kWarps; ++w)
    if (before(sk[w], si[w], k, i)) { k = sk[w]; i = si[w]; }
}

__device__ float block_max(float m, float* sk) {
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, o));
  __syncthreads();
  if ((threadIdx.x & 31) == 0) sk[threadIdx.x >> 5] = m;
  __syncthreads();
  m = sk[0];
  for (int w = 1; w < kWarps; ++w) m = fmaxf(m, sk[w]);
  return m;
}

__device__ double block_sum(double s, double* sd) {
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  __syncthreads();
  if ((threadIdx.x & 31) == 0) sd[threadIdx.x >> 5] = s;
  __syncthreads();
  s = 0;
  for (int w = 0; w < kWarps; ++w) s += sd[w];
  return s;
}

/// Top-kMaxLogprobs of (key(i), i) for i in [0, count) by repeated block maxima: round r takes
/// the best entry ranked after round r-1's winner, so no list is kept per thread. Writes
/// (INFINITY-free) keys and ids to out_k / out_i; ids INT_MAX past the end of a short range.
template <typename KeyOf, typename IdOf>
__device__ void top_by_rounds(int count, KeyOf key_of, IdOf id_of, float* out_k, int* out_i, float* sk, int* si) {
  float pk = INFINITY;
  int pi = -1;  // "before everything": every entry ranks after it
  for (int r = 0; r < kMaxLogprobs; ++r) {
    float bk = -INFINITY;
    int bi = INT_MAX;
    for (int j = threadIdx.x; j < count; j += blockDim.x) {
      const int id = id_of(j);
      if (id == INT_MAX) continue;
      const float k = key_of(j);
      if (before(pk, pi, k, id) && before(k, id, bk, bi)) { bk = k; bi = id; }
    }
    block_best(bk, bi, sk, si);
    if (threadIdx.x == 0) { out_k[r] = bk; out_i[r] = bi; }
    pk = bk;
    pi = bi;
    if (bi == INT_MAX) {  // fewer entries than rounds: the rest stay empty
      for (int q = r + 1 + static_cast<int>(threadIdx.x); q < kMaxLogprobs; q += blockDim.x) { out_k[q] = -INFINITY; out_i[q] = INT_MAX; }
      break;
    }
  }
}

__global__ void __launch_bounds__(kThreads)
logprobs_kernel(const float* __restrict__ v, int n, StepLogprobs* __restrict__ out, Scratch* __restrict__ scr) {
  __shared__ float sk[kWarps];
  __shared__ int si[kWarps];
  __shared__ double sd[kWarps];
  __shared__ bool last;
  const int per = (n + gridDim.x - 1) / gridDim.x;
  const int lo = min(n, static_cast<int>(blockIdx.x) * per), hi = min(n, lo + per);
  const int b = blockIdx.x;

  // The block's maximum (NaN ignored, as std::max does on the host) and whether it saw a NaN.
  float m = -INFINITY;
  int nan = 0;
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    const float x = v[i];
    if (isnan(x)) nan = 1;
    else m = fmaxf(m, x);
  }
  nan = __syncthreads_or(nan);
  m = block_max(m, sk);
  double s = 0;
  if (m > -INFINITY)
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
      const float x = v[i];
      if (!isnan(x)) s += exp(static_cast<double>(x) - m);
    }
  s = block_sum(s, sd);
  top_by_rounds(hi - lo, [&](int j) { return rank_key(v[lo + j]); }, [&](int j) { return lo + j; }, scr->key[b], scr->id[b], sk, si);
  // Every thread's writes to this block's list (the empty tail of a short slice is written by
  // threads other than 0) must be ordered before thread 0's fence and ticket.
  __syncthreads();
  if (threadIdx.x == 0) {
    scr->max[b] = m;
    scr->sum[b] = s;
    scr->nan[b] = nan;
    __threadfence();
    last = atomicAdd(&scr->ticket, 1) == static_cast<int>(gridDim.x) - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();

  // The last block: combine the blocks' (max, sum) and merge their top lists.
  __shared__ double lse;
  __shared__ float top_k[kMaxLogprobs];
  __shared__ int top_i[kMaxLogprobs];
  if (threadIdx.x == 0) {
    float gm = -INFINITY;
    int any_nan = 0;
    for (int q = 0; q < static_cast<int>(gridDim.x); ++q) {
      gm = fmaxf(gm, __ldcg(&scr->max[q]));
      any_nan |= __ldcg(&scr->nan[q]);
    }
    double gs = 0;
    for (int q = 0; q < static_cast<int>(gridDim.x); ++q) {
      const float bm = __ldcg(&scr->max[q]);
      if (bm > -INFINITY) gs += __ldcg(&scr->sum[q]) * exp(static_cast<double>(bm) - gm);
    }
    // All -inf, or +inf among them: no distribution (NaN), as for a NaN logit.
    lse = (any_nan || !isfinite(gm)) ? static_cast<double>(NAN) : static_cast<double>(gm) + log(gs);
  }
  const int cand = static_cast<int>(gridDim.x) * kMaxLogprobs;
  const float* ck = &scr->key[0][0];
  const int* ci = &scr->id[0][0];
  top_by_rounds(cand, [&](int j) { return __ldcg(&ck[j]); }, [&](int j) { return __ldcg(&ci[j]); }, top_k, top_i, sk, si);
  __syncthreads();
  const int n_top = min(n, kMaxLogprobs);
  for (int r = threadIdx.x; r < kMaxLogprobs; r += blockDim.x) {
    const bool filled = r < n_top;
    out->top_ids[r] = filled ? top_i[r] : 0;
    out->top_logprobs[r] = filled ? static_cast<float>(static_cast<double>(v[top_i[r]]) - lse) : 0.0f;
  }
  if (threadIdx.x == 0) {
    int t = out->token;
    t = t < 0 || t >= n ? 0 : t;  // the samplers write ids in [0, n); the bound only keeps the read in range
    out->token_logprob = static_cast<float>(static_cast<double>(v[t]) - lse);
    out->n_top = n_top;
    scr->ticket = 0;
  }
}

}  // namespace

void token_logprobs(const float* v, int n, StepLogprobs* out, void* scratch, cudaStream_t s) {
  const int blocks = std::max(1, std::min(kBlocks, (n + kThreads - 1) / kThreads));
  logprobs_kernel<<<blocks, kThreads, 0, s>>>(v, n, out, static_cast<Scratch*>(scratch));
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

std::size_t logprobs_scratch_bytes() { return sizeof(Scratch); }

}  // namespace atlas::kernels
