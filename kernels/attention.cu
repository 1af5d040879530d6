#include "kernels/attention.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "common/env_flag.hpp"
#include "kernels/attention_decode_cluster.hpp"
#include "kernels/check.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {

constexpr int kMaxGroup = 8;      // query heads per KV head supported by the decode kernel
constexpr int kDecodeThreads = 256;

/// One warp: optional per-head RMSNorm (Qwen3 q_norm/k_norm), then RoPE, of the d values at
/// `src`; calls out(i, value) for every element.
template <typename W, typename Out>
__device__ __forceinline__ void prep_head(const float* src, const float* norm, float eps, int d, int pos,
                                          float base, bool interleaved, int rope_dim, Out&& out) {
  const int lane = threadIdx.x & 31;
  float inv = 1.0f;
  if (norm != nullptr) {
    float ss = 0.0f;
    for (int i = lane; i < d; i += 32) ss += src[i] * src[i];
    ss = dev::warp_sum(ss);
    inv = rsqrtf(ss / static_cast<float>(d) + eps);
  }
  auto val = [&](int i) { return norm != nullptr ? norm[i] * (src[i] * inv) : src[i]; };
  const int rot = rope_dim > 0 && rope_dim < d ? rope_dim : d;
  dev::rope_pairs(rot, pos, base, interleaved, [&](int a, int b, float c, float s) {
    const float xa = val(a), xb = val(b);
    out(a, xa * c - xb * s);
    out(b, xa * s + xb * c);
  });
  for (int i = rot + lane; i < d; i += 32) out(i, val(i));  // partial RoPE: the rest pass through
}

/// Loads kVec<W> elements at p (16-byte aligned) as floats.
template <typename W>
__device__ __forceinline__ void load_vec(const W* p, float* o) {
  dev::unpack<W>(*reinterpret_cast<const uint4*>(p), o);
}

/// Lanes that share one key in the team score phase: the vectors of a row spread over lanes
/// (a power of two <= 32, so a team never straddles a warp and reduces with shuffles).
__host__ __device__ constexpr int team_lanes(int nvec) {
  int t = 1;
  while (t < nvec && t < 32) t *= 2;
  return t;
}

constexpr int kTeamKeys = 4;  // keys one team scores per round (loads in flight per lane)

/// kTeams: scores by teams of lanes per key (coalesced 16-byte loads, shuffle reduction, every
/// thread busy); otherwise one thread per key (the first version: idle threads at short slices).
template <typename W, bool kTeams>
__global__ void __launch_bounds__(kDecodeThreads)
attention_decode_kernel(DecodeAttentionArgs a) {
  extern __shared__ __align__(16) float sm[];
  constexpr int V = dev::kVec<W>;
  const int d = a.prep.head_dim, G = a.prep.n_heads / a.prep.n_kv_heads;
  const int g = blockIdx.x, split = blockIdx.y, S = a.n_splits;
  float* qs = sm;                          // [G][d], scaled by 1/sqrt(d)
  float* accs = qs + G * d;                // [G][d]
  float* ps = accs + G * d;                // [G][chunk_cap]
  float* red = ps + G * a.chunk_cap;       // [key groups][G][d]
  __shared__ float mls[kMaxGroup][2];
  __shared__ int last_block;
  // Launch the next kernel (the o_proj GEMV) now: it streams its weights while attention runs.
  dev::pdl_trigger();

  // The position comes from the step's H2D copy, which completed before the first kernel of the
  // step started; cached K rows other than `pos` were written by earlier steps. Both may be read
  // before the PDL wait, so the first K vectors stream while the q/k/v projection drains.
  const int pos = *a.pos;
  const int len = pos + 1;
  const dev::KeySlice slice = dev::key_slice(len, S, split);
  const int t0 = slice.t0, t1 = slice.t1;
  const int n = max(0, t1 - t0);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
  const float scale = rsqrtf(static_cast<float>(d));
  const int q_dim = a.prep.n_heads * d, kv_dim = a.prep.n_kv_heads * d;
  W* kc = static_cast<W*>(a.k_cache) + static_cast<size_t>(g) * a.max_seq * d;
  W* vc = static_cast<W*>(a.v_cache) + static_cast<size_t>(g) * a.max_seq * d;
  const int nv = d / V;
  // P.V layout (used below): thread = (vector vi of d, key group kg).
  const int nvec = d / V;
  const int nkg = blockDim.x / nvec;
  const int vi = threadIdx.x % nvec, kg = threadIdx.x / nvec;
  uint4 vpre[4];
  if (kg < nkg) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int tt = kg + u * nkg;
      if (tt < n && t0 + tt != pos)
        vpre[u] = *reinterpret_cast<const uint4*>(vc + static_cast<size_t>(t0 + tt) * d + vi * V);
    }
  }
  // Team layout: lane tl of team `team` loads vectors tl, tl + T, ... of keys team + u * nteams.
  const int T = team_lanes(nv);
  const int team = threadIdx.x / T, tl = threadIdx.x % T, nteams = blockDim.x / T;
  uint4 tpre[kTeamKeys];
  if (kTeams && tl < nv) {
#pragma unroll
    for (int u = 0; u < kTeamKeys; ++u) {
      const int tt = team + u * nteams;
      if (tt < n && t0 + tt != pos)
        tpre[u] = *reinterpret_cast<const uint4*>(kc + static_cast<size_t>(t0 + tt) * d + tl * V);
    }
  }
  uint4 kpre[8];
  const bool have_pre = !kTeams && static_cast<int>(threadIdx.x) < n && t0 + static_cast<int>(threadIdx.x) != pos;
  if (have_pre) {
    const uint4* kr = reinterpret_cast<const uint4*>(kc + static_cast<size_t>(t0 + threadIdx.x) * d);
#pragma unroll
    for (int u = 0; u < 8; ++u)
      if (u < nv) kpre[u] = kr[u];
  }
  dev::pdl_wait();

  // q of the group's heads (norm + RoPE), and for the block that owns `pos`, the new K/V.
  for (int j = warp; j < G; j += nwarps) {
    const int h = g * G + j;
    prep_head<W>(a.qkv + h * d, a.prep.q_norm, a.prep.eps, d, pos, a.prep.rope_base,
                 a.prep.rope_interleaved, a.prep.rope_dim, [&](int i, float v) { qs[j * d + i] = v * scale; });
  }
  if (pos >= t0 && pos < t1) {
    if (warp == 0) {
      W* kd = kc + static_cast<size_t>(pos) * d;
      prep_head<W>(a.qkv + q_dim + g * d, a.prep.k_norm, a.prep.eps, d, pos,
                   a.prep.rope_base, a.prep.rope_interleaved, a.prep.rope_dim, [&](int i, float v) { kd[i] = dev::from_f32<W>(v); });
    } else if (warp == 1 % nwarps) {
      W* vd = vc + static_cast<size_t>(pos) * d;
      const float* vs = a.qkv + q_dim + kv_dim + g * d;
      for (int i = lane; i < d; i += 32) vd[i] = dev::from_f32<W>(vs[i]);
    }
  }
  __syncthreads();  // q in shared memory; the new K/V visible to this block

  if constexpr (kTeams) {
    // Scores by teams: the round's base is uniform across the block, so every lane of a warp
    // reaches the shuffles.
    for (int base = 0; base < n; base += kTeamKeys * nteams) {
      float dot[kTeamKeys][kMaxGroup] = {};
      for (int c = tl; c < nv; c += T) {
        uint4 buf[kTeamKeys];
#pragma unroll
        for (int u = 0; u < kTeamKeys; ++u) {
          const int tt = base + team + u * nteams;
          if (tt < n) {
            if (base == 0 && c == tl && t0 + tt != pos) buf[u] = tpre[u];
            else buf[u] = *reinterpret_cast<const uint4*>(kc + static_cast<size_t>(t0 + tt) * d + c * V);
          }
        }
#pragma unroll
        for (int u = 0; u < kTeamKeys; ++u) {
          if (base + team + u * nteams < n) {
            float kv[V];
            dev::unpack<W>(buf[u], kv);
#pragma unroll
            for (int j = 0; j < kMaxGroup; ++j) {
              if (j < G) {
                const float* q = qs + j * d + c * V;
#pragma unroll
                for (int e = 0; e < V; ++e) dot[u][j] = fmaf(q[e], kv[e], dot[u][j]);
              }
            }
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kTeamKeys; ++u) {
        const int tt = base + team + u * nteams;
#pragma unroll
        for (int j = 0; j < kMaxGroup; ++j) {
          if (j < G) {
            float v = dot[u][j];
            for (int o = T / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
            if (tl == 0 && tt < n) ps[j * a.chunk_cap + tt] = v;
          }
        }
      }
    }
  }
  // Scores, one thread per key; a key's vectors are loaded 8 at a time before use (loads in flight).
  for (int t = kTeams ? n : static_cast<int>(threadIdx.x); t < n; t += blockDim.x) {
    const uint4* kr = reinterpret_cast<const uint4*>(kc + static_cast<size_t>(t0 + t) * d);
    float dot[kMaxGroup] = {};
    for (int c0 = 0; c0 < nv; c0 += 8) {
      uint4 buf[8];
      if (c0 == 0 && t == static_cast<int>(threadIdx.x) && have_pre) {
#pragma unroll
        for (int u = 0; u < 8; ++u) buf[u] = kpre[u];
      } else {
#pragma unroll
        for (int u = 0; u < 8; ++u)
          if (c0 + u < nv) buf[u] = kr[c0 + u];
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        if (c0 + u < nv) {
          float kv[V];
          dev::unpack<W>(buf[u], kv);
          const float* q = qs + (c0 + u) * V;
#pragma unroll
          for (int j = 0; j < kMaxGroup; ++j) {
            if (j < G) {
#pragma unroll
              for (int e = 0; e < V; ++e) dot[j] = fmaf(q[j * d + e], kv[e], dot[j]);
            }
          }
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kMaxGroup; ++j)
      if (j < G) ps[j * a.chunk_cap + t] = dot[j];
  }
  __syncthreads();
  // Softmax partial per head: one warp per head.
  for (int j = warp; j < G; j += nwarps) {
    float m = -INFINITY;
    for (int t = lane; t < n; t += 32) m = fmaxf(m, ps[j * a.chunk_cap + t]);
    m = dev::warp_max(m);
    float l = 0.0f;
    for (int t = lane; t < n; t += 32) {
      const float p = expf(ps[j * a.chunk_cap + t] - m);
      ps[j * a.chunk_cap + t] = p;
      l += p;
    }
    l = dev::warp_sum(l);
    if (lane == 0) { mls[j][0] = m; mls[j][1] = l; }
  }
  __syncthreads();
  // P.V: thread = (vector of d, key group); key groups are summed in a fixed order so that a
  // replay is bit-identical to an eager run.
  if (kg < nkg) {
    float acc[kMaxGroup][V] = {};
    for (int t = kg; t < n; t += 4 * nkg) {
      uint4 buf[4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int tt = t + u * nkg;
        if (tt < n) {
          // The first batch was loaded before the PDL wait, except the new row at `pos`.
          if (t == kg && t0 + tt != pos) buf[u] = vpre[u];
          else buf[u] = *reinterpret_cast<const uint4*>(vc + static_cast<size_t>(t0 + tt) * d + vi * V);
        }
      }
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int tt = t + u * nkg;
        if (tt < n) {
          float vv[V];
          dev::unpack<W>(buf[u], vv);
#pragma unroll
          for (int j = 0; j < kMaxGroup; ++j) {
            if (j < G) {
              const float p = ps[j * a.chunk_cap + tt];
#pragma unroll
              for (int e = 0; e < V; ++e) acc[j][e] = fmaf(p, vv[e], acc[j][e]);
            }
          }
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kMaxGroup; ++j)
      if (j < G)
#pragma unroll
        for (int e = 0; e < V; ++e) red[(kg * G + j) * d + vi * V + e] = acc[j][e];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < G * d; i += blockDim.x) {
    float sum = 0.0f;
    for (int k = 0; k < nkg; ++k) sum += red[k * G * d + i];
    accs[i] = sum;
  }
  __syncthreads();
  if (S == 1) {
    // One slice holds every key: its softmax sum normalises the output, no partials to merge.
    W* out = static_cast<W*>(a.out);
    for (int i = threadIdx.x; i < G * d; i += blockDim.x)
      out[static_cast<size_t>(g) * G * d + i] = dev::from_f32<W>(accs[i] / mls[i / d][1]);
    return;
  }
  // Publish the partial, then the last block of this head merges all of them.
  const size_t pidx = static_cast<size_t>(g) * S + split;
  for (int i = threadIdx.x; i < G * d; i += blockDim.x) a.part_o[pidx * G * d + i] = accs[i];
  if (threadIdx.x < G) {
    a.part_ml[(pidx * G + threadIdx.x) * 2 + 0] = mls[threadIdx.x][0];
    a.part_ml[(pidx * G + threadIdx.x) * 2 + 1] = mls[threadIdx.x][1];
  }
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last_block = atomicAdd(&a.tickets[g], 1) == S - 1;
  __syncthreads();
  if (!last_block) return;
  __threadfence();
  // Merge: one warp per head computes each split's weight exp(m_s - M) / L (S <= 32 = lanes),
  // then every thread combines its outputs over the splits.
  __shared__ float wts[kMaxGroup][32];
  for (int j = warp; j < G; j += nwarps) {
    float m = -INFINITY, l = 0.0f;
    if (lane < S) {
      const size_t q = (static_cast<size_t>(g) * S + lane) * G + j;
      m = __ldcg(&a.part_ml[q * 2]);
      l = __ldcg(&a.part_ml[q * 2 + 1]);
    }
    const float M = dev::warp_max(l > 0.0f ? m : -INFINITY);
    const float wgt = l > 0.0f ? expf(m - M) : 0.0f;
    const float L = dev::warp_sum(l * wgt);
    wts[j][lane] = wgt / L;
  }
  __syncthreads();
  W* out = static_cast<W*>(a.out);
  for (int i = threadIdx.x; i < G * d; i += blockDim.x) {
    const int j = i / d;
    float O = 0.0f;
    for (int s0 = 0; s0 < S; s0 += 8) {
      float po[8];
#pragma unroll
      for (int u = 0; u < 8; ++u)
        po[u] = s0 + u < S ? __ldcg(&a.part_o[(static_cast<size_t>(g) * S + s0 + u) * G * d + i]) : 0.0f;
#pragma unroll
      for (int u = 0; u < 8; ++u)
        if (s0 + u < S) O = fmaf(po[u], wts[j][s0 + u], O);
    }
    out[static_cast<size_t>(g) * G * d + i] = dev::from_f32<W>(O);
  }
  if (threadIdx.x == 0) a.tickets[g] = 0;
}

template <typename W>
__global__ void rope_prefill_kernel(RopePrefillArgs a) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int H = a.prep.n_heads, KV = a.prep.n_kv_heads, d = a.prep.head_dim;
  const int slots = H + 2 * KV;
  if (warp >= a.n_tokens * slots) return;
  const int i = warp / slots, slot = warp % slots;
  const int pos = a.pos + i;
  const float* row = a.qkv + static_cast<size_t>(i) * a.qkv_ld;
  const int lane = threadIdx.x & 31;
  if (slot < H) {
    W* q = static_cast<W*>(a.q_out) + (static_cast<size_t>(slot) * a.n_tokens + i) * d;
    prep_head<W>(row + slot * d, a.prep.q_norm, a.prep.eps, d, pos, a.prep.rope_base,
                 a.prep.rope_interleaved, a.prep.rope_dim, [&](int e, float v) { q[e] = dev::from_f32<W>(v); });
  } else if (slot < H + KV) {
    const int g = slot - H;
    W* k = static_cast<W*>(a.k_cache) + (static_cast<size_t>(g) * a.max_seq + pos) * d;
    prep_head<W>(row + H * d + g * d, a.prep.k_norm, a.prep.eps, d, pos,
                 a.prep.rope_base, a.prep.rope_interleaved, a.prep.rope_dim, [&](int e, float v) { k[e] = dev::from_f32<W>(v); });
  } else {
    const int g = slot - H - KV;
    W* v = static_cast<W*>(a.v_cache) + (static_cast<size_t>(g) * a.max_seq + pos) * d;
    const float* src = row + (H + KV) * d + g * d;
    for (int e = lane; e < d; e += 32) v[e] = dev::from_f32<W>(src[e]);
  }
}

template <typename W>
__global__ void causal_softmax_kernel(const float* __restrict__ s, W* __restrict__ p, int n_query, int n_keys,
                                      int pos0) {  // n_keys: the row stride
  __shared__ float scratch[32];
  const int r = blockIdx.x;
  const int visible = pos0 + (r % n_query) + 1;
  const float* sr = s + static_cast<size_t>(r) * n_keys;
  W* pr = p + static_cast<size_t>(r) * n_keys;
  float m = -INFINITY;
  for (int t = threadIdx.x; t < visible; t += blockDim.x) m = fmaxf(m, sr[t]);
  m = dev::block_max(m, scratch);
  float l = 0.0f;
  for (int t = threadIdx.x; t < visible; t += blockDim.x) l += expf(sr[t] - m);
  l = dev::block_sum(l, scratch);
  const float inv = 1.0f / l;
  for (int t = threadIdx.x; t < n_keys; t += blockDim.x)
    pr[t] = dev::from_f32<W>(t < visible ? expf(sr[t] - m) * inv : 0.0f);
}

template <typename W>
__global__ void heads_to_rows_kernel(const W* __restrict__ o, W* __restrict__ out, int n_heads, int n_tokens,
                                     int d, int ld) {
  const size_t total = static_cast<size_t>(n_heads) * n_tokens * d;
  for (size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int e = idx % d;
    const int i = (idx / d) % n_tokens;
    const int h = idx / (static_cast<size_t>(d) * n_tokens);
    out[static_cast<size_t>(i) * ld + h * d + e] = o[idx];
  }
}

int grid_for(size_t n, int threads) {
  const size_t b = (n + threads - 1) / threads;
  return static_cast<int>(b < 65535 * 16 ? b : 65535 * 16);
}

}  // namespace

std::size_t attention_decode_smem(int group, int head_dim, int chunk_cap, ElemType wtype) {
  const int vec = 16 / static_cast<int>(elem_size(wtype));
  const int key_groups = kDecodeThreads / (head_dim / vec);
  return static_cast<std::size_t>(2 * group * head_dim + group * chunk_cap + key_groups * group * head_dim) *
         sizeof(float);
}

/// ATLAS_ATTN_KERNEL=split selects the split-K kernel where the cluster kernel would apply.
static bool forced_split() {
  static const bool v = atlas::env_choice("ATLAS_ATTN_KERNEL", {"split", "cluster"}) == "split";
  return v;
}

/// ATLAS_ATTN_KEYS_PER_SPLIT (0 or unset: 32).
static int keys_per_split() {
  static const int v = [] {
    const int k = atlas::env_int("ATLAS_ATTN_KEYS_PER_SPLIT", 0, 1 << 20, 0);
    return k > 0 ? k : 32;
  }();
  return v;
}

static bool cluster_kernel(ElemType wtype, int group, int head_dim, int rope_dim) {
  const bool full_rope = rope_dim <= 0 || rope_dim >= head_dim;  // the cluster kernel rotates whole heads
  return !forced_split() && full_rope && attention_decode_cluster_supported(wtype, group, head_dim);
}

int attention_decode_splits(ElemType wtype, int group, int head_dim, int bucket, int rope_dim) {
  // Short slices, many blocks: a block's time is a chain of dependent load rounds, so 128 or
  // 256 keys per slice measured slower on the H200 than 32 or 64 (docs/PERF.md).
  const int keys = keys_per_split();
  if (cluster_kernel(wtype, group, head_dim, rope_dim))
    return attention_decode_cluster_splits(wtype, group, head_dim, bucket, keys);
  return std::clamp(bucket / keys, 1, 32);
}

void attention_decode_prepare(ElemType wtype, int group, int head_dim, int chunk_cap, int rope_dim) {
  const bool cluster = cluster_kernel(wtype, group, head_dim, rope_dim);
  if (cluster) attention_decode_cluster_prepare(wtype, group, head_dim);
  const int bytes = static_cast<int>(attention_decode_smem(group, head_dim, chunk_cap, wtype));
  if (cluster) {  // the split-K kernel only runs when called by name: prepare it where it fits
    int dev = 0, optin = 0;
    ATLAS_CUDA_CHECK(cudaGetDevice(&dev));
    ATLAS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (bytes > optin) return;
  }
  auto set = [bytes](auto kernel) {
    ATLAS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  };
  if (wtype == ElemType::bf16) {
    set(attention_decode_kernel<__nv_bfloat16, true>);
    set(attention_decode_kernel<__nv_bfloat16, false>);
  } else {
    set(attention_decode_kernel<float, true>);
    set(attention_decode_kernel<float, false>);
  }
}

/// ATLAS_ATTN_SCORES=thread selects the one-thread-per-key score phase (A/B runs).
static bool attention_team_scores() {
  static const bool on = atlas::env_choice("ATLAS_ATTN_SCORES", {"thread", "team"}) != "thread";
  return on;
}

void attention_read_env_knobs() {
  forced_split();
  keys_per_split();
  attention_team_scores();
}

void attention_decode(const DecodeAttentionArgs& a, cudaStream_t stream) {
  if (a.prep.n_kv_heads > 0 && cluster_kernel(a.wtype, a.prep.n_heads / a.prep.n_kv_heads, a.prep.head_dim, a.prep.rope_dim))
    return attention_decode_cluster(a, stream);
  attention_decode_split(a, stream);
}

void attention_decode_split(const DecodeAttentionArgs& a, cudaStream_t stream) {
  const int G = a.prep.n_heads / a.prep.n_kv_heads;
  if (a.n_splits < 1 || a.n_splits > 32) throw KernelError("attention_decode: n_splits must be in [1, 32]");
  if (G > kMaxGroup || a.prep.n_heads % a.prep.n_kv_heads != 0)
    throw KernelError("attention_decode: n_heads / n_kv_heads must be an integer <= 8");
  if (a.prep.head_dim % 8 != 0 || a.prep.head_dim > 512)
    throw KernelError("attention_decode: head_dim must be a multiple of 8 and <= 512");
  const dim3 grid(a.prep.n_kv_heads, a.n_splits);
  const size_t smem = attention_decode_smem(G, a.prep.head_dim, a.chunk_cap, a.wtype);
  const bool teams = attention_team_scores();
  if (a.wtype == ElemType::bf16)
    launch_pdl(teams ? attention_decode_kernel<__nv_bfloat16, true> : attention_decode_kernel<__nv_bfloat16, false>,
               grid, dim3(kDecodeThreads), smem, stream, a);
  else
    launch_pdl(teams ? attention_decode_kernel<float, true> : attention_decode_kernel<float, false>, grid,
               dim3(kDecodeThreads), smem, stream, a);
}

void rope_prefill(const RopePrefillArgs& a, cudaStream_t stream) {
  const size_t warps = static_cast<size_t>(a.n_tokens) * (a.prep.n_heads + 2 * a.prep.n_kv_heads);
  const int threads = 128;
  const int blocks = static_cast<int>((warps * 32 + threads - 1) / threads);
  if (a.wtype == ElemType::bf16) rope_prefill_kernel<__nv_bfloat16><<<blocks, threads, 0, stream>>>(a);
  else rope_prefill_kernel<float><<<blocks, threads, 0, stream>>>(a);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

void causal_softmax(ElemType wtype, const float* s, void* p, int rows, int n_query, int n_keys, int pos0,
                    cudaStream_t stream) {  // n_keys: the row stride (ld)
  if (wtype == ElemType::bf16)
    causal_softmax_kernel<__nv_bfloat16><<<rows, 256, 0, stream>>>(s, static_cast<__nv_bfloat16*>(p), n_query, n_keys, pos0);
  else
    causal_softmax_kernel<float><<<rows, 256, 0, stream>>>(s, static_cast<float*>(p), n_query, n_keys, pos0);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

void heads_to_rows(ElemType wtype, const void* o, void* out, int n_heads, int n_tokens, int head_dim, int ld,
                   cudaStream_t stream) {
  const size_t total = static_cast<size_t>(n_heads) * n_tokens * head_dim;
  const int blocks = grid_for(total, 256);
  if (wtype == ElemType::bf16)
    heads_to_rows_kernel<__nv_bfloat16><<<blocks, 256, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(o), static_cast<__nv_bfloat16*>(out), n_heads, n_tokens, head_dim, ld);
  else
    heads_to_rows_kernel<float><<<blocks, 256, 0, stream>>>(static_cast<const float*>(o), static_cast<float*>(out),
                                                            n_heads, n_tokens, head_dim, ld);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
