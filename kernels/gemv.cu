// Decode GEMV. A block of 8 warps covers 16/KSPLIT rows; each warp takes two rows (their loads
// interleave; swiglu pairs gate/up) over a 1/KSPLIT slice of K, with 16-byte streaming loads, 8
// vectors per row in flight per lane. KSPLIT (1..8) is picked so the grid has several blocks
// per SM even for matrices with few rows. The first weight vectors are loaded before the PDL
// wait, so they stream while the previous kernel drains. The RMSNorm prologue stages the
// normalised input in shared memory; a plain input is read straight through L1.
#include "kernels/gemv.hpp"

#include <cuda_bf16.h>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"
#include "kernels/launch.cuh"

namespace atlas::kernels {
namespace {

constexpr int kWarps = 8;        // 256 threads
constexpr int kRowsPerWarp = 2;
constexpr int kUnroll = 8;       // 16-byte vectors per row in flight per lane

template <typename W, GemvInput In, GemvOutput Out, int KSplit>
__global__ void __launch_bounds__(kWarps * 32)
gemv_kernel(const W* __restrict__ w, int rows, int k, int ld, const void* __restrict__ xin,
            const W* __restrict__ norm, float eps, void* __restrict__ yout) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ float scratch[32];
  __shared__ float red[kWarps][kRowsPerWarp];
  constexpr int kGroups = kWarps / KSplit;  // row groups per block
  dev::pdl_trigger();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int group = warp / KSplit, slice = warp % KSplit;
  const int row0 = (blockIdx.x * kGroups + group) * kRowsPerWarp;
  const bool active = row0 < rows;
  const int nvec = ld / dev::kVec<W>;
  constexpr int kStep = 32 * KSplit;
  const uint4* wr[kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int row = min(row0 + r, rows - 1);  // a missing second row re-reads the first; not stored
    wr[r] = reinterpret_cast<const uint4*>(w + static_cast<size_t>(row) * ld);
  }
  const int c0 = slice * 32 + lane;
  // Weights do not depend on earlier kernels: start streaming them before the PDL wait.
  uint4 wv[kRowsPerWarp][kUnroll];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int c = c0 + u * kStep;
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r)
      wv[r][u] = (active && c < nvec) ? dev::ld_stream(wr[r] + c) : make_uint4(0, 0, 0, 0);
  }
  dev::pdl_wait();

  const uint4* xv;
  if constexpr (In == GemvInput::rmsnorm) {
    W* xs = reinterpret_cast<W*>(smem_raw);
    const float* x = static_cast<const float*>(xin);
    float ss = 0.0f;
    for (int i = threadIdx.x; i < k; i += blockDim.x) ss += x[i] * x[i];
    ss = dev::block_sum(ss, scratch);
    const float inv = rsqrtf(ss / static_cast<float>(k) + eps);
    for (int i = threadIdx.x; i < ld; i += blockDim.x)
      xs[i] = i < k ? dev::from_f32<W>(dev::to_f32(norm[i]) * (x[i] * inv)) : dev::from_f32<W>(0.0f);
    __syncthreads();
    xv = reinterpret_cast<const uint4*>(xs);
  } else {
    xv = static_cast<const uint4*>(xin);
  }

  float acc[kRowsPerWarp] = {};
  for (int base = c0;; ) {
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
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int c = base + u * kStep;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) wv[r][u] = c < nvec ? dev::ld_stream(wr[r] + c) : make_uint4(0, 0, 0, 0);
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) acc[r] = dev::warp_sum(acc[r]);
  if constexpr (KSplit > 1) {
    // Slices of one row group meet in shared memory, summed in a fixed order (deterministic).
    if (lane == 0)
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) red[warp][r] = acc[r];
    __syncthreads();
    if (slice != 0) return;
#pragma unroll
    for (int r = 0; r < kRowsPerWarp; ++r) {
      float s = 0.0f;
#pragma unroll
      for (int j = 0; j < KSplit; ++j) s += red[group * KSplit + j][r];
      acc[r] = s;
    }
  }
  if (lane != 0 || !active) return;
  if constexpr (Out == GemvOutput::swiglu) {
    const float g = acc[0], u = acc[1];
    static_cast<W*>(yout)[row0 / 2] = dev::from_f32<W>(g / (1.0f + expf(-g)) * u);
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

int g_sm_count = 0;

int sm_count() {
  if (g_sm_count == 0) {
    int dev = 0;
    ATLAS_CUDA_CHECK(cudaGetDevice(&dev));
    ATLAS_CUDA_CHECK(cudaDeviceGetAttribute(&g_sm_count, cudaDevAttrMultiProcessorCount, dev));
  }
  return g_sm_count;
}

/// Smallest K split that gives the grid at least three blocks per SM (at most 8).
int pick_ksplit(int rows) {
  const int want = 3 * sm_count();
  int ks = 1;
  while (ks < 8 && (rows + (kWarps / ks) * kRowsPerWarp - 1) / ((kWarps / ks) * kRowsPerWarp) < want) ks *= 2;
  return ks;
}

template <typename W, GemvInput In, GemvOutput Out, int KSplit>
void launch(const GemvArgs& a, cudaStream_t s) {
  constexpr int rows_per_block = (kWarps / KSplit) * kRowsPerWarp;
  const int blocks = (a.rows + rows_per_block - 1) / rows_per_block;
  const size_t smem = In == GemvInput::rmsnorm ? static_cast<size_t>(a.ld) * sizeof(W) : 0;
  launch_pdl(gemv_kernel<W, In, Out, KSplit>, dim3(blocks), dim3(kWarps * 32), smem, s, static_cast<const W*>(a.w),
             a.rows, a.k, a.ld, a.x, static_cast<const W*>(a.norm), a.eps, a.y);
}

template <typename W, GemvInput In, GemvOutput Out>
void launch_split(const GemvArgs& a, cudaStream_t s) {
  switch (pick_ksplit(Out == GemvOutput::swiglu ? a.rows : a.rows)) {
    case 1: return launch<W, In, Out, 1>(a, s);
    case 2: return launch<W, In, Out, 2>(a, s);
    case 4: return launch<W, In, Out, 4>(a, s);
    default: return launch<W, In, Out, 8>(a, s);
  }
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
void set_smem_all(int bytes) {
  auto set = [bytes](auto fn) {
    ATLAS_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  };
  set(gemv_kernel<W, In, Out, 1>);
  set(gemv_kernel<W, In, Out, 2>);
  set(gemv_kernel<W, In, Out, 4>);
  set(gemv_kernel<W, In, Out, 8>);
}

template <typename W>
void set_smem(int bytes) {
  using I = GemvInput;
  using O = GemvOutput;
  set_smem_all<W, I::rmsnorm, O::store>(bytes);
  set_smem_all<W, I::rmsnorm, O::add>(bytes);
  set_smem_all<W, I::rmsnorm, O::swiglu>(bytes);
}

}  // namespace

void gemv(const GemvArgs& a, cudaStream_t stream) {
  if (a.ld % 8 != 0 || a.ld < a.k) throw KernelError("gemv: ld must be a multiple of 8 and >= k");
  if (a.output == GemvOutput::swiglu && a.rows % 2 != 0) throw KernelError("gemv: swiglu needs an even row count");
  if (a.wtype == DType::bf16) dispatch<__nv_bfloat16>(a, stream);
  else dispatch<float>(a, stream);
}

void gemv_prepare(int max_ld) {
  sm_count();
  set_smem<__nv_bfloat16>(max_ld * 2);
  set_smem<float>(max_ld * 4);
}

}  // namespace atlas::kernels
