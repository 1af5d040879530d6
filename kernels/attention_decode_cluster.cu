#include "kernels/attention_decode_cluster.hpp"

#include <cooperative_groups.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <mutex>
#include <utility>
#include <tuple>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {
namespace cg = cooperative_groups;

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kLoads = 4;       // 16-byte K (and V) loads per lane per batch of keys
constexpr int kMaxSplits = 16;  // cluster size limit (non-portable beyond 8)
constexpr float kLog2e = 1.4426950408889634f;

/// V consecutive float32 at p (16-byte aligned).
template <int V>
__device__ __forceinline__ void load_f32(const float* p, float* o) {
#pragma unroll
  for (int i = 0; i < V; i += 4) {
    const float4 v = *reinterpret_cast<const float4*>(p + i);
    o[i] = v.x;
    o[i + 1] = v.y;
    o[i + 2] = v.z;
    o[i + 3] = v.w;
  }
}

/// kVec<W> floats rounded to W, as one 16-byte vector (the inverse of dev::unpack).
template <typename W> __device__ __forceinline__ uint4 pack(const float* v);
template <> __device__ __forceinline__ uint4 pack<float>(const float* v) {
  return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]), __float_as_uint(v[3]));
}
template <> __device__ __forceinline__ uint4 pack<__nv_bfloat16>(const float* v) {
  auto two = [](float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<const unsigned*>(&h);
  };
  return make_uint4(two(v[0], v[1]), two(v[2], v[3]), two(v[4], v[5]), two(v[6], v[7]));
}

/// Sum over the LPK lanes of a key group (aligned groups of LPK lanes, LPK a power of two).
template <int LPK>
__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int o = LPK / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// RMSNorm (when has_norm: x * rsqrt(mean(x^2) + eps) * gain) and RoPE of one head held as V
/// elements per lane across a key group: lane li holds elements [li V, li V + V). The
/// rotate_half partner of element i is i + D/2, i.e. lane li ^ (LPK / 2), same slot. The
/// arithmetic matches prep_head in attention.cu element for element.
template <int V, int LPK, int D>
__device__ __forceinline__ void norm_rope(float* x, const float* gain, bool has_norm, float eps, const float* cs,
                                          const float* sn, bool interleaved, int li) {
  if (has_norm) {
    float ss = 0.0f;
#pragma unroll
    for (int e = 0; e < V; ++e) ss += x[e] * x[e];
    ss = group_sum<LPK>(ss);
    const float inv = rsqrtf(ss / static_cast<float>(D) + eps);
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = gain[e] * (x[e] * inv);
  }
  if (interleaved) {
#pragma unroll
    for (int e = 0; e < V; e += 2) {
      const float xa = x[e], xb = x[e + 1];
      x[e] = xa * cs[e] - xb * sn[e];
      x[e + 1] = xa * sn[e] + xb * cs[e];
    }
  } else {
    float partner[V];
#pragma unroll
    for (int e = 0; e < V; ++e) partner[e] = __shfl_xor_sync(0xffffffffu, x[e], LPK / 2);
    const bool low = li < LPK / 2;
#pragma unroll
    for (int e = 0; e < V; ++e) x[e] = low ? x[e] * cs[e] - partner[e] * sn[e] : partner[e] * sn[e] + x[e] * cs[e];
  }
}

template <typename W, int D, int GB>
__global__ void __launch_bounds__(kThreads) attention_decode_cluster_kernel(DecodeAttentionArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // clusters need sm_90; attention_decode_cluster_supported() keeps older devices off this path
#else
  constexpr int V = dev::kVec<W>;       // elements per 16-byte vector
  constexpr int LPK = D / V;            // lanes per key
  constexpr int KPL = 32 / LPK;         // keys per warp-wide load
  constexpr int kBatch = kLoads * kWarps * KPL;
  static_assert(LPK >= 2 && LPK <= 32 && 32 % LPK == 0, "head_dim / vector width must divide 32");
  __shared__ float w_m[kWarps][GB], w_l[kWarps][GB];
  __shared__ __align__(16) float w_acc[kWarps][GB][D];
  __shared__ float b_m[GB], b_l[GB];
  __shared__ __align__(16) float b_acc[GB][D];

  const cg::cluster_group cluster = cg::this_cluster();
  const int S = static_cast<int>(cluster.num_blocks());
  const int split = static_cast<int>(cluster.block_rank());
  const int g = blockIdx.y;
  const int G = a.prep.n_heads / a.prep.n_kv_heads;
  const int h0 = g * G + blockIdx.z * GB;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kg = lane / LPK, li = lane % LPK;

  // Launch the next kernel (the o_proj GEMV) now: it streams its weights while attention runs.
  dev::pdl_trigger();

  // The position comes from the step's H2D copy, complete before the step's first kernel;
  // cached rows other than `pos` were written by earlier steps. Both may be read before the PDL
  // wait, so the first K/V batch streams while the q/k/v projection drains.
  const int pos = *a.pos;
  const int len = pos + 1;
  const dev::KeySlice slice = dev::key_slice(len, S, split);
  const int t0 = slice.t0, t1 = slice.t1;
  const int tend = min(t1, pos);  // cached keys of this slice; the new key is scored apart
  const int nb = tend > t0 ? (tend - t0 + kBatch - 1) / kBatch : 0;
  const bool owner = pos >= t0 && pos < t1;
  W* kc = static_cast<W*>(a.k_cache) + static_cast<size_t>(g) * a.max_seq * D;
  W* vc = static_cast<W*>(a.v_cache) + static_cast<size_t>(g) * a.max_seq * D;
  auto key = [&](int b, int u) { return t0 + ((b * kLoads + u) * kWarps + warp) * KPL + kg; };
  auto load = [&](int b, uint4* kb, uint4* vb) {
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const int t = key(b, u);
      const bool in = t < tend;
      kb[u] = in ? *reinterpret_cast<const uint4*>(kc + static_cast<size_t>(t) * D + li * V) : make_uint4(0, 0, 0, 0);
      vb[u] = in ? *reinterpret_cast<const uint4*>(vc + static_cast<size_t>(t) * D + li * V) : make_uint4(0, 0, 0, 0);
    }
  };
  uint4 kb[kLoads], vb[kLoads];
  load(0, kb, vb);

  // RoPE angles of this lane's elements and the norm gains: not written by the q/k/v projection.
  // The table was written by the step's embedding kernel. Reading it before the PDL wait is
  // safe only because this kernel is launched by the q/k/v GEMV's trigger, which that kernel
  // issues after its own wait, i.e. after the embedding kernel completed (gemv.cu keeps the
  // trigger there). Read through L2 (.cg): an SM's L1 may still hold the previous step's table.
  const bool interleaved = a.prep.rope_interleaved;
  float cs[V], sn[V];
  if (a.rope_cs != nullptr) {
    // This lane's elements use V consecutive pairs (half layout) or V / 2 (interleaved); one
    // branch per layout so that every index is a compile-time constant (registers, not the
    // local memory a runtime-indexed staging array took).
    const float4* tab = reinterpret_cast<const float4*>(a.rope_cs);
    if (interleaved) {
      const int p0 = li * V / 2;
#pragma unroll
      for (int c = 0; c < V / 2; c += 2) {  // pairs p0 + c and p0 + c + 1: one float4
        const float4 v = __ldcg(tab + (p0 + c) / 2);
        cs[2 * c] = cs[2 * c + 1] = v.x;
        sn[2 * c] = sn[2 * c + 1] = v.y;
        cs[2 * c + 2] = cs[2 * c + 3] = v.z;
        sn[2 * c + 2] = sn[2 * c + 3] = v.w;
      }
    } else {
      const int p0 = (li * V) % (D / 2);
#pragma unroll
      for (int e = 0; e < V; e += 2) {  // pairs p0 + e and p0 + e + 1
        const float4 v = __ldcg(tab + (p0 + e) / 2);
        cs[e] = v.x;
        sn[e] = v.y;
        cs[e + 1] = v.z;
        sn[e + 1] = v.w;
      }
    }
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const int idx = li * V + e;
      dev::rope_cos_sin(interleaved ? idx / 2 : idx % (D / 2), D, pos, a.prep.rope_base, &cs[e], &sn[e]);
    }
  }
  const bool q_norm = a.prep.q_norm != nullptr, k_norm = a.prep.k_norm != nullptr;
  float qg[V], kgain[V];
  // float32 gains (kernels/attention.hpp): V of them per lane.
  if (q_norm)
#pragma unroll
    for (int e = 0; e < V; ++e) qg[e] = a.prep.q_norm[li * V + e];
  if (k_norm)
#pragma unroll
    for (int e = 0; e < V; ++e) kgain[e] = a.prep.k_norm[li * V + e];
  dev::pdl_wait();

  // This lane's slice of every query head of the block, normalised, rotated, scaled by
  // log2(e) / sqrt(D) so that scores are in base 2.
  const float qscale = rsqrtf(static_cast<float>(D)) * kLog2e;
  float q[GB][V];
#pragma unroll
  for (int j = 0; j < GB; ++j) load_f32<V>(a.qkv + static_cast<size_t>(h0 + j) * D + li * V, q[j]);
  // The new key's k and v in the same memory round trip as q (warp 0 of the owning block).
  const bool new_key = owner && warp == 0;
  float kx[V], vx[V];
  if (new_key) {
    const int q_dim = a.prep.n_heads * D, kv_dim = a.prep.n_kv_heads * D;
    load_f32<V>(a.qkv + q_dim + g * D + li * V, kx);
    load_f32<V>(a.qkv + q_dim + kv_dim + g * D + li * V, vx);
  }
#pragma unroll
  for (int j = 0; j < GB; ++j) {
    norm_rope<V, LPK, D>(q[j], qg, q_norm, a.prep.eps, cs, sn, interleaved, li);
#pragma unroll
    for (int e = 0; e < V; ++e) q[j][e] *= qscale;
  }

  // Online-softmax state per key group: running max m (base 2), sum l, unnormalised output.
  float m[GB], l[GB], acc[GB][V];
#pragma unroll
  for (int j = 0; j < GB; ++j) {
    m[j] = -INFINITY;
    l[j] = 0.0f;
#pragma unroll
    for (int e = 0; e < V; ++e) acc[j][e] = 0.0f;
  }
  uint4 kp, vp;  // the new K/V row as the cache holds it (stored after the first cluster barrier)
  if (new_key) {
    // The new key: k-norm + RoPE, rounded to the cache type, written for later steps, and
    // scored from registers (key group 0 owns it in the softmax).
    norm_rope<V, LPK, D>(kx, kgain, k_norm, a.prep.eps, cs, sn, interleaved, li);
    kp = pack<W>(kx);
    vp = pack<W>(vx);
    dev::unpack<W>(kp, kx);
    dev::unpack<W>(vp, vx);
#pragma unroll
    for (int j = 0; j < GB; ++j) {
      float s = 0.0f;
#pragma unroll
      for (int e = 0; e < V; ++e) s = fmaf(q[j][e], kx[e], s);
      s = group_sum<LPK>(s);
      if (kg == 0) {
        m[j] = s;
        l[j] = 1.0f;
#pragma unroll
        for (int e = 0; e < V; ++e) acc[j][e] = vx[e];
      }
    }
  }

  for (int b = 0; b < nb; ++b) {
    uint4 kn[kLoads], vn[kLoads];
    const bool more = b + 1 < nb;
    if (more) load(b + 1, kn, vn);  // in flight while this batch is used
    float s[kLoads][GB];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      float kf[V];
      dev::unpack<W>(kb[u], kf);
#pragma unroll
      for (int j = 0; j < GB; ++j) {
        float d = 0.0f;
#pragma unroll
        for (int e = 0; e < V; ++e) d = fmaf(q[j][e], kf[e], d);
        s[u][j] = d;
      }
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      const bool in = key(b, u) < tend;
#pragma unroll
      for (int j = 0; j < GB; ++j) {
        const float v = group_sum<LPK>(s[u][j]);
        s[u][j] = in ? v : -INFINITY;
      }
    }
#pragma unroll
    for (int j = 0; j < GB; ++j) {
      float mx = m[j];
#pragma unroll
      for (int u = 0; u < kLoads; ++u) mx = fmaxf(mx, s[u][j]);
      const float ref = mx == -INFINITY ? 0.0f : mx;  // no -inf - -inf
      const float sc = exp2f(m[j] - ref);
      l[j] *= sc;
#pragma unroll
      for (int e = 0; e < V; ++e) acc[j][e] *= sc;
      m[j] = mx;
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        s[u][j] = exp2f(s[u][j] - ref);  // now p
        l[j] += s[u][j];
      }
    }
#pragma unroll
    for (int u = 0; u < kLoads; ++u) {
      float vf[V];
      dev::unpack<W>(vb[u], vf);
#pragma unroll
      for (int j = 0; j < GB; ++j)
#pragma unroll
        for (int e = 0; e < V; ++e) acc[j][e] = fmaf(s[u][j], vf[e], acc[j][e]);
    }
    if (more) {
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        kb[u] = kn[u];
        vb[u] = vn[u];
      }
    }
  }

  // Merge the warp's key groups (lanes li, li + LPK, ...) by shuffles, in a fixed order.
#pragma unroll
  for (int o = LPK; o < 32; o <<= 1) {
#pragma unroll
    for (int j = 0; j < GB; ++j) {
      const float mo = __shfl_xor_sync(0xffffffffu, m[j], o), lo = __shfl_xor_sync(0xffffffffu, l[j], o);
      const float M = fmaxf(m[j], mo);
      const float ref = M == -INFINITY ? 0.0f : M;
      const float sa = exp2f(m[j] - ref), sb = exp2f(mo - ref);
      l[j] = l[j] * sa + lo * sb;
#pragma unroll
      for (int e = 0; e < V; ++e) acc[j][e] = acc[j][e] * sa + __shfl_xor_sync(0xffffffffu, acc[j][e], o) * sb;
      m[j] = M;
    }
  }
  if (kg == 0) {
#pragma unroll
    for (int j = 0; j < GB; ++j) {
#pragma unroll
      for (int e = 0; e < V; ++e) w_acc[warp][j][li * V + e] = acc[j][e];
      if (li == 0) {
        w_m[warp][j] = m[j];
        w_l[warp][j] = l[j];
      }
    }
  }
  __syncthreads();
  // Merge the block's warps: one thread per output element.
  for (int i = threadIdx.x; i < GB * D; i += kThreads) {
    const int j = i / D, e = i % D;
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) M = fmaxf(M, w_m[w][j]);
    const float ref = M == -INFINITY ? 0.0f : M;
    float L = 0.0f, O = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float sc = exp2f(w_m[w][j] - ref);
      L = fmaf(w_l[w][j], sc, L);
      O = fmaf(w_acc[w][j][e], sc, O);
    }
    b_acc[j][e] = O;
    if (e == 0) {
      b_m[j] = M;
      b_l[j] = L;
    }
  }
  cluster.sync();  // every slice's partial is visible to the cluster
  // The new row is for later steps only (kernel completion publishes it): storing it after the
  // barrier keeps the barrier's release from waiting on the global write.
  if (new_key && kg == 0 && blockIdx.z == 0) {  // one of the head blocks writes the shared row
    *reinterpret_cast<uint4*>(kc + static_cast<size_t>(pos) * D + li * V) = kp;
    *reinterpret_cast<uint4*>(vc + static_cast<size_t>(pos) * D + li * V) = vp;
  }

  // Merge the S slices through distributed shared memory: block `split` finalises its share of
  // the GB * D outputs. Slice 0 always holds key 0, so the maximum is finite.
  const int per = (GB * D + S - 1) / S;
  const int i_end = min(GB * D, (split + 1) * per);
  for (int i = split * per + threadIdx.x; i < i_end; i += kThreads) {
    const int j = i / D, e = i % D;
    float ms[kMaxSplits], ls[kMaxSplits], os[kMaxSplits];
#pragma unroll
    for (int r = 0; r < kMaxSplits; ++r) {
      if (r < S) {
        ms[r] = *cluster.map_shared_rank(&b_m[j], r);
        ls[r] = *cluster.map_shared_rank(&b_l[j], r);
        os[r] = *cluster.map_shared_rank(&b_acc[j][e], r);
      }
    }
    float M = -INFINITY;
#pragma unroll
    for (int r = 0; r < kMaxSplits; ++r)
      if (r < S) M = fmaxf(M, ms[r]);
    float L = 0.0f, O = 0.0f;
#pragma unroll
    for (int r = 0; r < kMaxSplits; ++r) {
      if (r < S) {
        const float sc = exp2f(ms[r] - M);
        L = fmaf(ls[r], sc, L);
        O = fmaf(os[r], sc, O);
      }
    }
    static_cast<W*>(a.out)[static_cast<size_t>(h0 + j) * D + e] = dev::from_f32<W>(O / L);
  }
  // No block may leave while another still reads its shared memory. Relaxed: the reads are
  // complete (their values were used above) and nothing else needs ordering. The .aligned forms
  // need the whole warp converged after the loop above.
  __syncwarp();
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}

using Kernel = void (*)(DecodeAttentionArgs);

/// Query heads per block: 2 (1 for odd groups); a group of G takes G / 2 blocks per slice, each
/// re-reading the head's K/V (from L2). Against four heads per block: twice the blocks and
/// 147-149 registers instead of 190; qwen3-8b attention 202 -> 140 us per token on the H200
/// (docs/PERF.md, "decode attention by thread-block clusters").
int heads_per_block(int group) { return group % 2 == 0 ? 2 : 1; }

template <typename W, int D>
Kernel pick_gb(int gb) {
  return gb == 2 ? attention_decode_cluster_kernel<W, D, 2> : attention_decode_cluster_kernel<W, D, 1>;
}

/// The instantiation for a shape, or null where none exists.
Kernel kernel_for(ElemType wtype, int group, int head_dim) {
  if (group < 1 || group > 8) return nullptr;
  const int gb = heads_per_block(group);
  if (wtype == ElemType::bf16) {
    if (head_dim == 64) return pick_gb<__nv_bfloat16, 64>(gb);
    if (head_dim == 128) return pick_gb<__nv_bfloat16, 128>(gb);
    if (head_dim == 256) return pick_gb<__nv_bfloat16, 256>(gb);
  } else {
    if (head_dim == 64) return pick_gb<float, 64>(gb);
    if (head_dim == 128) return pick_gb<float, 128>(gb);
  }
  return nullptr;
}

int current_device() {
  int dev = 0;
  ATLAS_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

/// Thread-block clusters need compute capability 9.0 (the kernels are built for sm_90a only).
/// False, not an error, without a usable device.
bool device_has_clusters() {
  static std::mutex mu;
  static std::map<int, bool> cache;
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(dev); it != cache.end()) return it->second;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return cache[dev] = false;
  }
  return cache[dev] = major >= 9;
}

/// Largest cluster size (a power of two <= 16) the current device can schedule for this kernel,
/// by the occupancy query; sets the non-portable-size attribute first (function attributes are
/// per device; not a stream operation: the decoder calls this before any capture).
int max_cluster(Kernel k) {
  static std::mutex mu;
  static std::map<std::pair<int, Kernel>, int> cache;
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find({dev, k}); it != cache.end()) return it->second;
  const bool non_portable = cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) == cudaSuccess;
  if (!non_portable) (void)cudaGetLastError();  // that call's own error: the device keeps the portable limit of 8
  int best = 1;
  for (int size = non_portable ? kMaxSplits : 8; size > 1; size /= 2) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(size, 1, 1);
    cfg.blockDim = dim3(kThreads);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = size;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, k, &cfg);
    if (e != cudaSuccess) (void)cudaGetLastError();  // clears that query's error only
    if (e == cudaSuccess && clusters > 0) {
      best = size;
      break;
    }
  }
  return cache[{dev, k}] = best;
}

}  // namespace

bool attention_decode_cluster_supported(ElemType wtype, int group, int head_dim) {
  return kernel_for(wtype, group, head_dim) != nullptr && device_has_clusters();
}

int attention_decode_cluster_splits(ElemType wtype, int group, int head_dim, int bucket, int keys_per_split) {
  const Kernel k = kernel_for(wtype, group, head_dim);
  const int limit = k != nullptr ? max_cluster(k) : 1;
  int s = 1;
  while (s * 2 <= bucket / std::max(1, keys_per_split) && s * 2 <= limit) s *= 2;
  return s;
}

void attention_decode_cluster_prepare(ElemType wtype, int group, int head_dim) {
  if (Kernel k = kernel_for(wtype, group, head_dim)) max_cluster(k);
}

void attention_decode_cluster(const DecodeAttentionArgs& a, cudaStream_t stream) {
  const int G = a.prep.n_kv_heads > 0 ? a.prep.n_heads / a.prep.n_kv_heads : 0;
  const Kernel k = kernel_for(a.wtype, G, a.prep.head_dim);
  if (k == nullptr || a.prep.n_heads % a.prep.n_kv_heads != 0)
    throw KernelError("attention_decode_cluster: no kernel for " + std::string(to_string(a.wtype)) + " head_dim " +
                      std::to_string(a.prep.head_dim) + " group " + std::to_string(G));
  const int S = a.n_splits;
  if (S < 1 || S > max_cluster(k) || (S & (S - 1)) != 0)
    throw KernelError("attention_decode_cluster: n_splits " + std::to_string(S) +
                      " must be a power of two <= " + std::to_string(max_cluster(k)));
  const dim3 grid(S, a.prep.n_kv_heads, G / heads_per_block(G));
  launch_pdl_clusters(k, grid, dim3(kThreads), 0, stream, static_cast<unsigned>(S), a);
}

}  // namespace atlas::kernels
