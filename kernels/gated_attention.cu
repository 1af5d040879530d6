#include "kernels/gated_attention.hpp"

#include <string>

#include <cuda_bf16.h>

#include "kernels/check.hpp"
#include "kernels/device_common.cuh"

namespace atlas::kernels {
namespace {

template <typename W>
__global__ void output_gate_kernel(W* attn, int attn_ld, const float* gate, int gate_ld, int width) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, t = blockIdx.y;
  if (i >= width) return;
  W* a = attn + static_cast<size_t>(t) * attn_ld;
  const float g = 1.0f / (1.0f + expf(-gate[static_cast<size_t>(t) * gate_ld + i]));
  a[i] = dev::from_f32<W>(dev::to_f32(a[i]) * g);
}

}  // namespace

void attention_output_gate(ElemType wtype, void* attn, const float* gate, int n, cudaStream_t stream) {
  attention_output_gate_rows(wtype, attn, n, gate, n, n, 1, stream);
}

void attention_output_gate_rows(ElemType wtype, void* attn, int attn_ld, const float* gate, int gate_ld, int width,
                                int n_rows, cudaStream_t stream) {
  if (n_rows < 1 || n_rows > 65535 || (n_rows > 1 && (attn_ld < width || gate_ld < width)))
    throw KernelError("attention_output_gate_rows: " + std::to_string(n_rows) + " rows of " + std::to_string(width) +
                      " (attn_ld " + std::to_string(attn_ld) + ", gate_ld " + std::to_string(gate_ld) + ")");
  const dim3 grid((width + 255) / 256, n_rows);
  if (wtype == ElemType::bf16)
    output_gate_kernel<<<grid, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(attn), attn_ld, gate, gate_ld, width);
  else
    output_gate_kernel<<<grid, 256, 0, stream>>>(static_cast<float*>(attn), attn_ld, gate, gate_ld, width);
  ATLAS_CUDA_CHECK(cudaGetLastError());
}

}  // namespace atlas::kernels
