#include "kernels/gdn.hpp"

#include <cuda_bf16.h>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"

namespace atlas::kernels {
namespace {

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }
// torch.nn.functional.softplus (beta 1, threshold 20), as engine/cpu/gdn.cpp.
__device__ __forceinline__ float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

__global__ void gdn_conv_kernel(GdnConvArgs a) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int C = a.shape.conv_dim(), K = a.shape.conv_kernel, hist = K - 1;
  if (c >= C) return;
  const float* w = a.weight + static_cast<size_t>(c) * K;
  float* st = a.state + static_cast<size_t>(c) * hist;
  for (int t = 0; t < a.n_tokens; ++t) {
    const float x = a.proj[static_cast<size_t>(t) * a.proj_ld + c];
    // Same order as the CPU reference: taps oldest first, the new input last.
    float sum = 0.0f;
    for (int j = 0; j < hist; ++j) sum += w[j] * st[j];
    sum += w[hist] * x;
    a.out[static_cast<size_t>(t) * a.out_ld + c] = sum / (1.0f + expf(-sum));
    for (int j = 0; j + 1 < hist; ++j) st[j] = st[j + 1];
    if (hist > 0) st[hist - 1] = x;
  }
}

template <typename W>
__global__ void gdn_recurrence_kernel(GdnRecurrenceArgs a) {
  extern __shared__ float sm[];
  const GdnShape& s = a.shape;
  const int h = blockIdx.x, r = s.v_heads / s.k_heads, g = h / r;
  const int dk = s.k_dim, dv = s.v_dim;
  float* q = sm;          // [dk]
  float* k = q + dk;      // [dk]
  __shared__ float red[32];
  __shared__ float gate[2];  // decay, beta
  for (int t = 0; t < a.n_tokens; ++t) {
    const float* conv = a.conv + static_cast<size_t>(t) * a.conv_ld;
    const float* proj = a.proj + static_cast<size_t>(t) * a.proj_ld;
    const float* qsrc = conv + g * dk;
    const float* ksrc = conv + s.key_dim() + g * dk;
    float qq = 0.0f, kk = 0.0f;
    for (int i = threadIdx.x; i < dk; i += blockDim.x) {
      q[i] = qsrc[i];
      k[i] = ksrc[i];
      qq += q[i] * q[i];
      kk += k[i] * k[i];
    }
    qq = dev::block_sum(qq, red);
    kk = dev::block_sum(kk, red);
    // HF l2norm: x * rsqrt(sum x^2 + 1e-6); the CPU divides by sqrt, same to rounding.
    const float qinv = 1.0f / sqrtf(qq + 1e-6f), kinv = 1.0f / sqrtf(kk + 1e-6f);
    const float qscale = 1.0f / sqrtf(static_cast<float>(dk));
    for (int i = threadIdx.x; i < dk; i += blockDim.x) {
      q[i] = (q[i] * qinv) * qscale;
      k[i] = k[i] * kinv;
    }
    if (threadIdx.x == 0) {
      const float* z_end = proj + s.conv_dim() + s.value_dim();  // b [v_heads] | a [v_heads]
      const float b = z_end[h], av = z_end[s.v_heads + h];
      gate[0] = expf(a.a_neg[h] * softplus(av + a.dt_bias[h]));
      gate[1] = 1.0f / (1.0f + expf(-b));
    }
    __syncthreads();
    const float decay = gate[0], beta = gate[1];
    float* S = a.state + static_cast<size_t>(h) * dk * dv;
    const float* v = conv + 2 * s.key_dim() + h * dv;
    const float* z = proj + s.conv_dim() + h * dv;
    float osq = 0.0f, o = 0.0f;
    const int j = threadIdx.x;  // one column of S per thread (blockDim >= dv)
    if (j < dv) {
      float m = 0.0f;
      for (int i = 0; i < dk; ++i) m += (S[static_cast<size_t>(i) * dv + j] * decay) * k[i];
      const float delta = (v[j] - m) * beta;
      for (int i = 0; i < dk; ++i) {
        float* p = S + static_cast<size_t>(i) * dv + j;
        const float sn = *p * decay + k[i] * delta;
        *p = sn;
        o += sn * q[i];
      }
      osq = o * o;
    }
    osq = dev::block_sum(osq, red);
    if (j < dv) {
      const float inv = 1.0f / sqrtf(osq / static_cast<float>(dv) + a.eps);
      const float y = a.norm[j] * (o * inv) * silu(z[j]);
      static_cast<W*>(a.out)[static_cast<size_t>(t) * a.out_ld + h * dv + j] = dev::from_f32<W>(y);
    }
    __syncthreads();  // q, k and the gates in shared memory are the next token's
  }
}

}  // namespace

void gdn_conv_decode(const GdnConvArgs& a, cudaStream_t stream) {
  if (a.shape.conv_kernel < 1) throw KernelError("gdn_conv_decode: conv_kernel must be >= 1");
  const int C = a.shape.conv_dim();
  gdn_conv_kernel<<<(C + 255) / 256, 256, 0, stream>>>(a);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

void gdn_recurrence_decode(const GdnRecurrenceArgs& a, cudaStream_t stream) {
  const GdnShape& s = a.shape;
  if (s.v_dim > 1024 || s.k_dim > 1024 || s.k_heads <= 0 || s.v_heads % s.k_heads != 0)
    throw KernelError("gdn_recurrence_decode: needs k_dim, v_dim <= 1024 and v_heads a multiple of k_heads");
  const int threads = (s.v_dim + 31) / 32 * 32;
  const size_t smem = 2 * sizeof(float) * s.k_dim;
  if (a.wtype == ElemType::bf16) gdn_recurrence_kernel<__nv_bfloat16><<<s.v_heads, threads, smem, stream>>>(a);
  else gdn_recurrence_kernel<float><<<s.v_heads, threads, smem, stream>>>(a);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
