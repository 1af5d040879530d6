// Decode GEMV (two variants, same work split: gemv_kernel holds weight vectors in registers,
// gemv_async_kernel streams them through a cp.async shared-memory ring; the latter is the
// default). A block of 8 warps covers 16/KSPLIT rows; each warp takes two rows (their loads
// interleave; swiglu pairs gate/up) over a 1/KSPLIT slice of K, with 16-byte streaming loads, 8
// vectors per row in flight per lane. KSPLIT (1..8) is picked so the grid has several blocks
// per SM even for matrices with few rows. The first weight vectors are loaded before the PDL
// wait, so they stream while the previous kernel drains. The RMSNorm prologue stages the
// normalised input in shared memory; a plain input of 8 KiB or more is staged there too (one
// batched copy), a smaller one is read through L1.
#include "kernels/gemv.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "common/env_flag.hpp"
#include "kernels/check.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {

constexpr int kWarps = 8;        // 256 threads
constexpr int kRowsPerWarp = 2;
constexpr int kUnroll = 8;       // 16-byte vectors per row in flight per lane

/// Four consecutive floats at p (16-byte aligned).
__device__ __forceinline__ void load4(const float* p, float* o) {
  const float4 v = *reinterpret_cast<const float4*>(p);
  o[0] = v.x; o[1] = v.y; o[2] = v.z; o[3] = v.w;
}

/// dst[0, nvec) (shared) = src[0, nvec) (global), all threads of the block: each thread issues
/// its loads in batches of 8 before storing, so the copy costs about one memory round trip; the
/// product loop then reads the input from shared memory instead of taking an L2 round trip at
/// each first touch.
__device__ __forceinline__ void stage_vector(const uint4* __restrict__ src, int nvec, uint4* dst) {
  constexpr int kBatch = 8;
  for (int base = threadIdx.x; base < nvec; base += kBatch * blockDim.x) {
    uint4 v[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = base + j * blockDim.x;
      if (i < nvec) v[j] = src[i];
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = base + j * blockDim.x;
      if (i < nvec) dst[i] = v[j];
    }
  }
  __syncthreads();
}

constexpr int kNormChunks = 4;  // 4-element chunks of x per thread held in registers (k <= 4096)

/// xs[0, ld) (weight type) = RMSNorm(x) * g for i < k, zero beyond; all threads of the block.
/// Every thread loads its chunks of x and g as one batch (a single memory round trip after the
/// PDL wait), rather than one load per loop iteration as a plain strided loop compiles to; rows
/// that do not fit take the loop.
template <typename W>
__device__ __forceinline__ void rmsnorm_prologue(const float* __restrict__ x, const float* __restrict__ norm, int k, int ld,
                                                 float eps, W* xs, float* scratch) {
  const int t = threadIdx.x, nt = blockDim.x;
  const bool batched = k % 4 == 0 && k <= kNormChunks * 4 * nt;
  float ss = 0.0f;
  if (batched) {
    float xr[kNormChunks][4], gr[kNormChunks][4];
#pragma unroll
    for (int j = 0; j < kNormChunks; ++j) {
      const int i = (j * nt + t) * 4;
      if (i < k) {
        load4(x + i, xr[j]);
        load4(norm + i, gr[j]);
      }
    }
#pragma unroll
    for (int j = 0; j < kNormChunks; ++j)
      if ((j * nt + t) * 4 < k)
#pragma unroll
        for (int e = 0; e < 4; ++e) ss += xr[j][e] * xr[j][e];
    ss = dev::block_sum(ss, scratch);
    const float inv = rsqrtf(ss / static_cast<float>(k) + eps);
#pragma unroll
    for (int j = 0; j < kNormChunks; ++j) {
      const int i = (j * nt + t) * 4;
      if (i < k)
#pragma unroll
        for (int e = 0; e < 4; ++e) xs[i + e] = dev::from_f32<W>(gr[j][e] * (xr[j][e] * inv));
    }
    for (int i = k + t; i < ld; i += nt) xs[i] = dev::from_f32<W>(0.0f);
  } else {
    for (int i = t; i < k; i += nt) ss += x[i] * x[i];
    ss = dev::block_sum(ss, scratch);
    const float inv = rsqrtf(ss / static_cast<float>(k) + eps);
    for (int i = t; i < ld; i += nt)
      xs[i] = i < k ? dev::from_f32<W>(norm[i] * (x[i] * inv)) : dev::from_f32<W>(0.0f);
  }
  __syncthreads();
}

/// The input vector x as 16-byte vectors of the weight type, as both GEMV variants read it after
/// the PDL wait: RMSNorm(x) * g written to shared memory (In == rmsnorm; x is float), x copied to
/// shared memory (stage_x), or x read in place from global memory. `smem` is the kernel's dynamic
/// shared memory (at least ld elements of W when staged). Every thread of the block must call it
/// (block reductions and barriers inside).
template <typename W, GemvInput In>
__device__ __forceinline__ const uint4* gemv_input(const void* __restrict__ xin, const float* __restrict__ norm, int k,
                                                   int ld, float eps, int nvec, int stage_x, unsigned char* smem,
                                                   float* scratch) {
  if constexpr (In == GemvInput::rmsnorm) {
    W* xs = reinterpret_cast<W*>(smem);
    rmsnorm_prologue(static_cast<const float*>(xin), norm, k, ld, eps, xs, scratch);
    return reinterpret_cast<const uint4*>(xs);
  } else if (stage_x) {
    uint4* xs = reinterpret_cast<uint4*>(smem);
    stage_vector(static_cast<const uint4*>(xin), nvec, xs);
    return xs;
  } else {
    return static_cast<const uint4*>(xin);
  }
}

/// End of a row pair, both variants: reduce the lanes' sums, then the pair's KSplit slices in
/// shared memory in a fixed order (deterministic), and store from lane 0 of slice 0. Every
/// thread of the block must call it (barriers when KSplit > 1).
template <typename W, GemvOutput Out, int KSplit>
__device__ __forceinline__ void finish_pair(float (&acc)[kRowsPerWarp], float (&red)[kWarps][kRowsPerWarp], int pair,
                                            bool active, int rows, void* __restrict__ yout) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int group = warp / KSplit, slice = warp % KSplit;
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) acc[r] = dev::warp_sum(acc[r]);
  if constexpr (KSplit > 1) {
    if (lane == 0)
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) red[warp][r] = acc[r];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      float sum = 0.0f;
#pragma unroll
      for (int j = 0; j < KSplit; ++j) sum += red[group * KSplit + j][r];
      acc[r] = sum;
    }
    __syncthreads();
  }
  if (lane != 0 || slice != 0 || !active) return;
  const int row0 = pair * kRowsPerWarp;
  if constexpr (Out == GemvOutput::swiglu) {
    const float g = acc[0], u = acc[1];
    static_cast<W*>(yout)[pair] = dev::from_f32<W>(g / (1.0f + expf(-g)) * u);
  } else {
    float* y = static_cast<float*>(yout);
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      if (row0 + r >= rows) break;
      if constexpr (Out == GemvOutput::add) y[row0 + r] += acc[r];
      else y[row0 + r] = acc[r];
    }
  }
}

/// Where a thread of a GEMV block works, the same in both kernels: its lane and warp, its warp's
/// row-pair group and K slice, the row's 16-byte vector count, and the block's contiguous row
/// pairs [p0, p1) of the persistent grid (block b of g owns pairs [P*b/g, P*(b+1)/g): balanced to
/// within one pair).
template <typename W, int KSplit>
struct GemvPlace {
  int lane, warp, group, slice, nvec, pairs, p0, p1, c0;
  __device__ __forceinline__ GemvPlace(int rows, int ld)
      : lane(threadIdx.x & 31),
        warp(threadIdx.x >> 5),
        group(warp / KSplit),
        slice(warp % KSplit),
        nvec(ld / dev::kVec<W>),
        pairs((rows + kRowsPerWarp - 1) / kRowsPerWarp),
        p0(static_cast<int>(static_cast<long long>(pairs) * blockIdx.x / gridDim.x)),
        p1(static_cast<int>(static_cast<long long>(pairs) * (blockIdx.x + 1) / gridDim.x)),
        c0(slice * 32 + lane) {}
};

template <typename W, GemvInput In, GemvOutput Out, int KSplit>
__global__ void __launch_bounds__(kWarps * 32)
gemv_kernel(const W* __restrict__ w, int rows, int k, int ld, const void* __restrict__ xin,
            const float* __restrict__ norm, float eps, void* __restrict__ yout, int stage_x, int /*early_items*/) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ float scratch[32];
  __shared__ float red[kWarps][kRowsPerWarp];
  constexpr int kGroups = kWarps / KSplit;  // row pairs a block works on at once
  constexpr int kStep = 32 * KSplit;

  const GemvPlace<W, KSplit> at(rows, ld);
  const int lane = at.lane, group = at.group, slice = at.slice, nvec = at.nvec;
  const int pairs = at.pairs, p0 = at.p0, p1 = at.p1, c0 = at.c0;

  auto row_ptrs = [&](int pair, const uint4** wr) {
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int row = min(pair * kRowsPerWarp + r, rows - 1);  // a missing 2nd row re-reads the 1st; not stored
      wr[r] = reinterpret_cast<const uint4*>(w + static_cast<size_t>(row) * ld);
    }
  };
  uint4 wv[kRowsPerWarp][kUnroll];
  auto load_batch = [&](const uint4* const* wr, int base, bool on) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int c = base + u * kStep;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r)
        wv[r][u] = (on && c < nvec) ? dev::ld_stream(wr[r] + c) : make_uint4(0, 0, 0, 0);
    }
  };

  // Weights do not depend on earlier kernels: start streaming them before the PDL wait.
  int pair = p0 + group;
  const uint4* wr[kRowsPerWarp];
  row_ptrs(min(pair, pairs - 1), wr);
  load_batch(wr, c0, pair < p1);
  dev::pdl_wait();

  const uint4* xv = gemv_input<W, In>(xin, norm, k, ld, eps, nvec, stage_x, smem_raw, scratch);

  for (int step0 = p0; step0 < p1; step0 += kGroups) {
    pair = step0 + group;
    const bool active = pair < p1;
    if (step0 != p0) {
      row_ptrs(min(pair, pairs - 1), wr);
      load_batch(wr, c0, active);
    }
    // The last step: let the next kernel launch and start its own weight prefetch (after
    // pdl_wait: see gemv_async_kernel).
    if (step0 + kGroups >= p1) dev::pdl_trigger();
    float acc[kRowsPerWarp] = {};
    for (int base = c0;;) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int c = base + u * kStep;
        if (c < nvec) {
          const uint4 x = xv[c];
#pragma unroll
          for (int r = 0; r < kRowsPerWarp; ++r) acc[r] = dev::dot16<W>(wv[r][u], x, acc[r]);
        }
      }
      base += kStep * kUnroll;
      if (!active || base >= nvec) break;
      load_batch(wr, base, true);
    }
    finish_pair<W, Out, KSplit>(acc, red, pair, active, rows, yout);
  }
}

// The same work with a cp.async ring instead of register batches: each lane streams its weight
// vectors into its own shared-memory slots kStages deep (no registers held, no barrier needed:
// a thread reads only the slots it filled), so far more bytes are in flight per SM than
// registers allow (ncu on the register version: 2 blocks/SM, ~2/3 of warp time stalled on
// loads, ~50% of DRAM bandwidth).
// A 64 KiB ring per block (3 blocks per SM) measured best on the H200 against 48 and 32 KiB
// rings with 3 or 2 blocks per SM (docs/PERF.md, "decode attention by thread-block clusters":
// GEMV ring size and residency).
constexpr int kStages = 4;  // ring depth (items in flight per lane: kStages - 1 ahead + current)
constexpr int kChunk = 2;   // 16-byte vectors per row per lane per item

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

/// early_items value (from ATLAS_GEMV_PROLOGUE=half) that makes every block issue half of its
/// first ring item before the PDL wait.
constexpr int kHalfFirstItem = -2;

constexpr size_t kRingBytes = static_cast<size_t>(kWarps) * kStages * kRowsPerWarp * kChunk * 32 * 16;

template <typename W, GemvInput In, GemvOutput Out, int KSplit>
__global__ void __launch_bounds__(kWarps * 32)
gemv_async_kernel(const W* __restrict__ w, int rows, int k, int ld, const void* __restrict__ xin,
                  const float* __restrict__ norm, float eps, void* __restrict__ yout, int stage_x, int early_items) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ float scratch[32];
  __shared__ float red[kWarps][kRowsPerWarp];
  constexpr int kGroups = kWarps / KSplit;
  constexpr int kStep = 32 * KSplit;

  const GemvPlace<W, KSplit> at(rows, ld);
  const int lane = at.lane, warp = at.warp, group = at.group, slice = at.slice, nvec = at.nvec;
  const int pairs = at.pairs, p0 = at.p0, p1 = at.p1, c0 = at.c0;
  const int per_lane = (nvec + kStep - 1) / kStep;       // vectors per row per lane
  const int nchunk = (per_lane + kChunk - 1) / kChunk;   // items per pair
  const int steps = (p1 - p0 + kGroups - 1) / kGroups;   // block-uniform
  const int items = steps * nchunk;
  const size_t xs_bytes = (In == GemvInput::rmsnorm || stage_x) ? (static_cast<size_t>(ld) * sizeof(W) + 15) / 16 * 16 : 0;
  uint4* ring = reinterpret_cast<uint4*>(smem_raw + xs_bytes) + static_cast<size_t>(warp) * kStages * kRowsPerWarp * kChunk * 32;
  auto slot = [&](int stage, int r, int u) -> uint4* { return ring + ((stage * kRowsPerWarp + r) * kChunk + u) * 32 + lane; };

  // Vectors [ub, ue) of each row's kChunk in an item (no commit).
  auto issue_part = [&](int item, int ub, int ue) {
    const int step = item / nchunk, ch = item % nchunk;
    const int pair = p0 + group + step * kGroups;
    if (pair >= p1) return;
    const int stage = item % kStages;
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      const int row = min(pair * kRowsPerWarp + r, rows - 1);
      const uint4* wr = reinterpret_cast<const uint4*>(w + static_cast<size_t>(row) * ld);
#pragma unroll
      for (int u = 0; u < kChunk; ++u) {
        const int c = c0 + (ch * kChunk + u) * kStep;
        if (u >= ub && u < ue && c < nvec) cp_async16(slot(stage, r, u), wr + c);
      }
    }
  };
  auto issue = [&](int item) { issue_part(item, 0, kChunk); };

  // Weights do not depend on earlier kernels: issue some before the PDL wait. The input read
  // after the wait queues behind this SM's copies still in flight, so a block with a small share
  // keeps most of it for after the read:
  // - 1 or 2 items: half of item 0 before the wait, the rest of it after the read (same commit
  //   group), then item 1 where there is one;
  // - more: all but the last item, at most the ring's kStages - 1.
  // qwen3-0.6b (1-2 items per block in every layer GEMV): 1,387-1,399 tok/s with 3 items
  // before the wait, 1,476-1,487 with 1, 1,507-1,508 with half of one; qwen3-8b (8+ items)
  // keeps 3 (docs/PERF.md, "GEMV prologue split kept"). early_items forces a count (> 0) or
  // the half item (kHalfFirstItem) for every block (A/B knob ATLAS_GEMV_PROLOGUE).
  const bool half = early_items == kHalfFirstItem || (early_items == 0 && items <= 2);
  const int early = half ? 1 : early_items > 0 ? min(early_items, kStages - 1) : max(1, min(kStages - 1, items - 1));
  if (half) {
    if (items > 0) issue_part(0, 0, kChunk / 2);
  } else {
    for (int i = 0; i < early; ++i) {
      if (i < items) issue(i);
      cp_async_commit();
    }
  }
  dev::pdl_wait();

  const uint4* xv = gemv_input<W, In>(xin, norm, k, ld, eps, nvec, stage_x, smem_raw, scratch);
  if (half) {
    if (items > 0) issue_part(0, kChunk / 2, kChunk);
    cp_async_commit();
  }
  for (int i = early; i < kStages - 1; ++i) {
    if (i < items) issue(i);
    cp_async_commit();
  }

  float acc[kRowsPerWarp] = {};
  for (int it = 0; it < items; ++it) {
    if (it + kStages - 1 < items) issue(it + kStages - 1);
    cp_async_commit();
    cp_async_wait<kStages - 1>();  // this thread's copies for item `it` have landed
    const int step = it / nchunk, ch = it % nchunk;
    const int pair = p0 + group + step * kGroups;
    const bool active = pair < p1;
    const int stage = it % kStages;
    // Last step: let the next kernel launch. It must stay after pdl_wait: decode attention reads
    // the step's RoPE table before its own wait, which is safe only because this kernel (the
    // q/k/v projection) releases it after the embedding kernel has completed.
    if (ch == 0 && step == steps - 1) dev::pdl_trigger();
    if (active) {
#pragma unroll
      for (int u = 0; u < kChunk; ++u) {
        const int c = c0 + (ch * kChunk + u) * kStep;
        if (c < nvec) {
          const uint4 x = xv[c];
#pragma unroll
          for (int r = 0; r < kRowsPerWarp; ++r) acc[r] = dev::dot16<W>(*slot(stage, r, u), x, acc[r]);
        }
      }
    }
    if (ch != nchunk - 1) continue;
    finish_pair<W, Out, KSplit>(acc, red, pair, active, rows, yout);
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) acc[r] = 0.0f;
  }
  cp_async_wait<0>();
}

/// Which GEMV kernel decode uses: the cp.async ring (default) or register batches
/// (ATLAS_GEMV_KERNEL=regs), kept for A/B measurement.
bool use_async() {
  static const bool v = atlas::env_choice("ATLAS_GEMV_KERNEL", {"regs", "async"}) != "regs";
  return v;
}

int g_sm_count = 0;

int sm_count() {
  if (g_sm_count == 0) {
    int dev = 0;
    ATLAS_CUDA_CHECK(cudaGetDevice(&dev));
    ATLAS_CUDA_CHECK(cudaDeviceGetAttribute(&g_sm_count, cudaDevAttrMultiProcessorCount, dev));
  }
  return g_sm_count;
}

/// Resident blocks per SM of a kernel at a dynamic shared-memory size (cached).
template <typename W, GemvInput In, GemvOutput Out, int KSplit, bool Async>
int blocks_per_sm(size_t smem) {
  static std::mutex mu;
  static std::map<size_t, int> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(smem);
  if (it != cache.end()) return it->second;
  int n = 0;
  if constexpr (Async)
    ATLAS_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, gemv_async_kernel<W, In, Out, KSplit>, kWarps * 32, smem));
  else
    ATLAS_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, gemv_kernel<W, In, Out, KSplit>, kWarps * 32, smem));
  return cache[smem] = std::max(1, n);
}

/// ATLAS_GEMV_BLOCKS_PER_SM=N overrides the resident-block count the persistent grid is sized
/// by (a tuning knob: a large N gives one short range per block instead of a persistent grid).
int blocks_per_sm_override() {
  static const int v = atlas::env_int("ATLAS_GEMV_BLOCKS_PER_SM", 0, 1024, 0);  // 0: the occupancy query
  return v;
}

/// Whether a plain input vector of `bytes` is staged in shared memory or read through L1 by the
/// product loop. Measured on the H200 (docs/PERF.md): staging took qwen3-8b decode from 210 to
/// 226 tok/s (o_proj 8 KiB, down 24 KiB inputs: with a 64 KiB ring per block the L1 left over is
/// small) but cost qwen3-0.6b 1.5% (4-6 KiB inputs stay in L1; the copy adds a barrier), hence
/// the 8 KiB threshold. ATLAS_GEMV_PLAIN_X=smem / =global forces either (A/B runs).
/// A vector that would not fit beside the ring in the per-block shared-memory opt-in limit is
/// never staged.
/// ATLAS_GEMV_PLAIN_X: 1 smem, 0 global, -1 by size.
int plain_x_knob() {
  static const int forced = [] {
    const std::string e = atlas::env_choice("ATLAS_GEMV_PLAIN_X", {"smem", "global"});
    return e.empty() ? -1 : e == "smem" ? 1 : 0;
  }();
  return forced;
}

bool stage_plain_x(size_t bytes) {
  const int forced = plain_x_knob();
  static const size_t limit = [] {
    int dev = 0, optin = 0;
    ATLAS_CUDA_CHECK(cudaGetDevice(&dev));
    ATLAS_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return static_cast<size_t>(optin);
  }();
  if (bytes + kRingBytes + 1024 > limit) return false;  // 1 KiB: the kernels' static shared memory
  return forced >= 0 ? forced == 1 : bytes >= 8192;
}

/// ATLAS_GEMV_PROLOGUE=N (1..3) forces the ring items issued before the PDL wait, =half half of
/// the first item; 0 or unset: the kernel's rule (half an item for blocks of 1-2 items, else all
/// but the last item, at most 3). Anything else is an error, so a typo cannot silently run the
/// default in an A/B run.
int prologue_items_knob() {
  static const int v = [] {
    const char* e = std::getenv("ATLAS_GEMV_PROLOGUE");
    if (e == nullptr || *e == '\0') return 0;
    if (std::string(e) == "half") return kHalfFirstItem;
    char* end = nullptr;
    const long n = std::strtol(e, &end, 10);
    if (*end != '\0' || n < 0 || n > kStages - 1)
      throw atlas::InputError(std::string("environment variable ATLAS_GEMV_PROLOGUE must be 0 (default), half or 1..") +
                        std::to_string(kStages - 1) + ", got '" + e + "'");
    return static_cast<int>(n);
  }();
  return v;
}

/// ATLAS_GEMV_VERBOSE, by the project's one boolean rule (common/env_flag.hpp): =0 is off.
bool verbose_knob() {
  static const bool v = atlas::env_flag("ATLAS_GEMV_VERBOSE");
  return v;
}

template <typename W, GemvInput In>
size_t dyn_smem(int ld, bool async) {
  const bool staged = In == GemvInput::rmsnorm || stage_plain_x(static_cast<size_t>(ld) * sizeof(W));
  const size_t xs = staged ? (static_cast<size_t>(ld) * sizeof(W) + 15) / 16 * 16 : 0;
  return xs + (async ? kRingBytes : 0);
}

template <typename W, GemvInput In, GemvOutput Out, int KSplit, bool Async>
void launch(const GemvArgs& a, cudaStream_t s) {
  const size_t smem = dyn_smem<W, In>(a.ld, Async);
  auto kernel = Async ? gemv_async_kernel<W, In, Out, KSplit> : gemv_kernel<W, In, Out, KSplit>;
  const int pairs = (a.rows + kRowsPerWarp - 1) / kRowsPerWarp;
  const int occupancy = blocks_per_sm<W, In, Out, KSplit, Async>(smem);
  const int per_sm = blocks_per_sm_override() > 0 ? blocks_per_sm_override() : occupancy;
  const int blocks = std::min(pairs, sm_count() * per_sm);
  static const bool verbose = verbose_knob();
  if (verbose) {
    static std::mutex mu;
    static std::set<std::tuple<int, int, int, int>> seen;
    std::lock_guard<std::mutex> lock(mu);
    if (seen.insert({a.rows, a.k, static_cast<int>(In), static_cast<int>(Out)}).second)
      std::fprintf(stderr, "gemv %s rows %d k %d in %d out %d: ksplit %d, %d blocks (%d resident/SM, %d SMs), %.1f pairs/block\n",
                   Async ? "async" : "regs", a.rows, a.k, static_cast<int>(In), static_cast<int>(Out), KSplit, blocks,
                   occupancy, sm_count(), static_cast<double>(pairs) / blocks);
  }
  launch_pdl(kernel, dim3(blocks), dim3(kWarps * 32), smem, s, static_cast<const W*>(a.w), a.rows, a.k, a.ld, a.x,
             a.norm, a.eps, a.y,
             In == GemvInput::plain && stage_plain_x(static_cast<size_t>(a.ld) * sizeof(W)) ? 1 : 0,
             prologue_items_knob());
}

/// K split with the least estimated time for a persistent grid of `grid` blocks: a block does
/// ceil(pairs per block / (8 / ks)) steps, each costing 1/ks of a full-K pass plus a fixed
/// quarter pass (the reduction, barrier and pipeline refill). Without the fixed cost a 47-pair
/// block picked ks = 8 and ran 2x slower than ks = 1 (ncu, 2026-11-29).
int pick_ksplit(int rows, int grid) {
  const int pairs = (rows + kRowsPerWarp - 1) / kRowsPerWarp;
  const int per_block = (pairs + grid - 1) / grid;
  int best = 1;
  double best_t = 1e30;
  for (int ks = 1; ks <= 8; ks *= 2) {
    const int steps = (per_block + (kWarps / ks) - 1) / (kWarps / ks);
    const double t = steps * (1.0 / ks + 0.25);
    if (t < best_t - 1e-9) { best_t = t; best = ks; }
  }
  return best;
}

/// ATLAS_GEMV_KSPLIT=1/2/4/8 forces the K split (A/B runs); otherwise pick_ksplit decides.
int ksplit_override() {
  static const int v = [] {
    const int k = atlas::env_int("ATLAS_GEMV_KSPLIT", 1, 8, 0);
    if (k != 0 && k != 1 && k != 2 && k != 4 && k != 8)
      throw atlas::InputError("environment variable ATLAS_GEMV_KSPLIT = '" + std::to_string(k) + "' is not 1, 2, 4 or 8");
    return k;
  }();
  return v;
}

template <typename W, GemvInput In, GemvOutput Out, bool Async>
void launch_split_as(const GemvArgs& a, cudaStream_t s) {
  const size_t smem = dyn_smem<W, In>(a.ld, Async);
  const int grid = sm_count() * (blocks_per_sm_override() > 0 ? blocks_per_sm_override()
                                                               : blocks_per_sm<W, In, Out, 1, Async>(smem));
  switch (ksplit_override() > 0 ? ksplit_override() : pick_ksplit(a.rows, grid)) {
    case 1: return launch<W, In, Out, 1, Async>(a, s);
    case 2: return launch<W, In, Out, 2, Async>(a, s);
    case 4: return launch<W, In, Out, 4, Async>(a, s);
    default: return launch<W, In, Out, 8, Async>(a, s);
  }
}

template <typename W, GemvInput In, GemvOutput Out>
void launch_split(const GemvArgs& a, cudaStream_t s) {
  if (use_async()) launch_split_as<W, In, Out, true>(a, s);
  else launch_split_as<W, In, Out, false>(a, s);
}

template <typename W>
void dispatch(const GemvArgs& a, cudaStream_t s) {
  using I = GemvInput;
  using O = GemvOutput;
  if (a.input == I::rmsnorm) {
    if (a.output == O::store) return launch_split<W, I::rmsnorm, O::store>(a, s);
    if (a.output == O::add) return launch_split<W, I::rmsnorm, O::add>(a, s);
    return launch_split<W, I::rmsnorm, O::swiglu>(a, s);
  }
  if (a.output == O::store) return launch_split<W, I::plain, O::store>(a, s);
  if (a.output == O::add) return launch_split<W, I::plain, O::add>(a, s);
  return launch_split<W, I::plain, O::swiglu>(a, s);
}

template <typename W, GemvInput In, GemvOutput Out>
void set_smem_all(int max_ld) {
  const int regs = static_cast<int>(dyn_smem<W, In>(max_ld, false));
  const int async = static_cast<int>(dyn_smem<W, In>(max_ld, true));
  auto set = [](auto fn, int bytes) {
    if (bytes > 0) ATLAS_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  };
  set(gemv_kernel<W, In, Out, 1>, regs);
  set(gemv_kernel<W, In, Out, 2>, regs);
  set(gemv_kernel<W, In, Out, 4>, regs);
  set(gemv_kernel<W, In, Out, 8>, regs);
  set(gemv_async_kernel<W, In, Out, 1>, async);
  set(gemv_async_kernel<W, In, Out, 2>, async);
  set(gemv_async_kernel<W, In, Out, 4>, async);
  set(gemv_async_kernel<W, In, Out, 8>, async);
}

template <typename W>
void set_smem(int max_ld) {
  using I = GemvInput;
  using O = GemvOutput;
  set_smem_all<W, I::rmsnorm, O::store>(max_ld);
  set_smem_all<W, I::rmsnorm, O::add>(max_ld);
  set_smem_all<W, I::rmsnorm, O::swiglu>(max_ld);
  set_smem_all<W, I::plain, O::store>(max_ld);
  set_smem_all<W, I::plain, O::add>(max_ld);
  set_smem_all<W, I::plain, O::swiglu>(max_ld);
}

}  // namespace

void gemv(const GemvArgs& a, cudaStream_t stream) {
  if (a.ld % 8 != 0 || a.ld < a.k) throw KernelError("gemv: ld must be a multiple of 8 and >= k");
  if (a.output == GemvOutput::swiglu && a.rows % 2 != 0) throw KernelError("gemv: swiglu needs an even row count");
  if (a.wtype == ElemType::bf16) dispatch<__nv_bfloat16>(a, stream);
  else dispatch<float>(a, stream);
}

void gemv_read_env_knobs() {
  use_async();
  blocks_per_sm_override();
  plain_x_knob();
  prologue_items_knob();
  verbose_knob();
  ksplit_override();
}

void gemv_prepare(int max_ld) {
  sm_count();
  set_smem<__nv_bfloat16>(max_ld);
  set_smem<float>(max_ld);
}

}  // namespace atlas::kernels
