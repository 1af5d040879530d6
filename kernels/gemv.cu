// Decode GEMV: one warp per pair of rows, 16-byte streaming loads, 8 vectors per row in flight
// per lane, the input vector staged once per block in shared memory (RMSNorm applied there).
#include "kernels/gemv.hpp"

#include <cuda_bf16.h>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"

namespace atlas::kernels {
namespace {

constexpr int kWarps = 8;            // 256 threads
constexpr int kRowsPerWarp = 2;      // two rows interleave their loads; swiglu pairs gate/up
constexpr int kUnroll = 8;           // 16-byte vectors per row in flight per lane
constexpr int kRowsPerBlock = kWarps * kRowsPerWarp;

template <typename W, GemvInput In, GemvOutput Out>
__global__ void __launch_bounds__(kWarps * 32)
gemv_kernel(const W* __restrict__ w, int rows, int k, int ld, const void* __restrict__ xin,
            const W* __restrict__ norm, float eps, void* __restrict__ yout) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  W* xs = reinterpret_cast<W*>(smem_raw);
  __shared__ float scratch[32];

  // Prologue: the input vector in shared memory, in the weight type, padding zero.
  if constexpr (In == GemvInput::rmsnorm) {
    const float* x = static_cast<const float*>(xin);
    float ss = 0.0f;
    for (int i = threadIdx.x; i < k; i += blockDim.x) ss += x[i] * x[i];
    ss = dev::block_sum(ss, scratch);
    const float inv = rsqrtf(ss / static_cast<float>(k) + eps);
    for (int i = threadIdx.x; i < ld; i += blockDim.x)
      xs[i] = i < k ? dev::from_f32<W>(dev::to_f32(norm[i]) * (x[i] * inv)) : dev::from_f32<W>(0.0f);
  } else {
    const uint4* x = static_cast<const uint4*>(xin);
    uint4* xv = reinterpret_cast<uint4*>(xs);
    for (int i = threadIdx.x; i < ld / dev::kVec<W>; i += blockDim.x) xv[i] = x[i];
  }
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int row0 = (blockIdx.x * kWarps + warp) * kRowsPerWarp;
  if (row0 >= rows) return;
  const int nvec = ld / dev::kVec<W>;
  const uint4* wr[kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) {
    const int row = min(row0 + r, rows - 1);  // a missing second row re-reads the first; not stored
    wr[r] = reinterpret_cast<const uint4*>(w + static_cast<size_t>(row) * ld);
  }
  const uint4* xv = reinterpret_cast<const uint4*>(xs);
  float acc[kRowsPerWarp] = {};
  for (int base = lane; base < nvec; base += 32 * kUnroll) {
    uint4 wv[kRowsPerWarp][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int c = base + u * 32;
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) wv[r][u] = c < nvec ? dev::ld_stream(wr[r] + c) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int c = base + u * 32;
      if (c < nvec) {
        const uint4 x = xv[c];
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r) acc[r] = dev::dot16<W>(wv[r][u], x, acc[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r) acc[r] = dev::warp_sum(acc[r]);
  if (lane != 0) return;
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

template <typename W, GemvInput In, GemvOutput Out>
void launch(const GemvArgs& a, cudaStream_t s) {
  const int blocks = (a.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  const size_t smem = static_cast<size_t>(a.ld) * sizeof(W);
  gemv_kernel<W, In, Out><<<blocks, kWarps * 32, smem, s>>>(
      static_cast<const W*>(a.w), a.rows, a.k, a.ld, a.x, static_cast<const W*>(a.norm), a.eps, a.y);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

template <typename W>
void dispatch(const GemvArgs& a, cudaStream_t s) {
  using I = GemvInput;
  using O = GemvOutput;
  if (a.input == I::rmsnorm) {
    if (a.output == O::store) return launch<W, I::rmsnorm, O::store>(a, s);
    if (a.output == O::add) return launch<W, I::rmsnorm, O::add>(a, s);
    return launch<W, I::rmsnorm, O::swiglu>(a, s);
  }
  if (a.output == O::store) return launch<W, I::plain, O::store>(a, s);
  if (a.output == O::add) return launch<W, I::plain, O::add>(a, s);
  return launch<W, I::plain, O::swiglu>(a, s);
}

template <typename W>
void set_smem(int bytes) {
  using I = GemvInput;
  using O = GemvOutput;
  auto set = [bytes](auto fn) { ATLAS_CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)); };
  set(gemv_kernel<W, I::rmsnorm, O::store>);
  set(gemv_kernel<W, I::rmsnorm, O::add>);
  set(gemv_kernel<W, I::rmsnorm, O::swiglu>);
  set(gemv_kernel<W, I::plain, O::store>);
  set(gemv_kernel<W, I::plain, O::add>);
  set(gemv_kernel<W, I::plain, O::swiglu>);
}

}  // namespace

void gemv(const GemvArgs& a, cudaStream_t stream) {
  if (a.ld % 8 != 0 || a.ld < a.k) throw KernelError("gemv: ld must be a multiple of 8 and >= k");
  if (a.output == GemvOutput::swiglu && a.rows % 2 != 0) throw KernelError("gemv: swiglu needs an even row count");
  if (a.wtype == DType::bf16) dispatch<__nv_bfloat16>(a, stream);
  else dispatch<float>(a, stream);
}

void gemv_prepare(int max_ld) {
  set_smem<__nv_bfloat16>(max_ld * 2);
  set_smem<float>(max_ld * 4);
}

}  // namespace atlas::kernels
