#include "kernels/gated_attention.hpp"

#include <cuda_bf16.h>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"

namespace atlas::kernels {
namespace {

template <typename W>
__global__ void output_gate_kernel(W* attn, const float* gate, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = 1.0f / (1.0f + expf(-gate[i]));
  attn[i] = dev::from_f32<W>(dev::to_f32(attn[i]) * g);
}

}  // namespace

void attention_output_gate(DType wtype, void* attn, const float* gate, int n, cudaStream_t stream) {
  const int blocks = (n + 255) / 256;
  if (wtype == DType::bf16) output_gate_kernel<<<blocks, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(attn), gate, n);
  else output_gate_kernel<<<blocks, 256, 0, stream>>>(static_cast<float*>(attn), gate, n);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
