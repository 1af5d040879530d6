#pragma once
// Small kernels around the matrix products, one row or element at a time: embedding gather
// (with the decode step's RoPE table), row RMSNorm, SwiGLU. The sampler is kernels/sampling.hpp,
// weight conversion kernels/convert.hpp, weights generated on the device
// kernels/synthetic_weights.hpp.
#include <cuda_runtime_api.h>

#include "kernels/elem_type.hpp"

namespace atlas::kernels {

/// x[dim] (float32) = table[*token] (weight type, row stride ld). `token` is device memory.
void embed_token(ElemType wtype, const void* table, int ld, int dim, const int* token, float* x, cudaStream_t s);

/// The decode step's RoPE table: out[2i], out[2i + 1] = cos, sin of pair i's angle at *pos,
/// theta_i = pos * base^(-2i/head_dim), i < head_dim / 2 (device memory). Computed once per
/// step by the embedding kernel instead of by every lane of every layer's attention (ncu: the
/// powf + sincosf of the angles were over half of the decode attention kernel's instructions).
struct RopeTable {
  const int* pos = nullptr;
  int head_dim = 0;
  float base = 10000.0f;
  float* out = nullptr;  ///< float32 [head_dim]
};
/// embed_token, and the step's RoPE table in the same launch.
void embed_token(ElemType wtype, const void* table, int ld, int dim, const int* token, float* x, const RopeTable& rope,
                 cudaStream_t s);
/// x[i][dim] = table[tokens[i]] for i < n (tokens in device memory).
void embed_rows(ElemType wtype, const void* table, int ld, int dim, const int* tokens, int n, float* x, cudaStream_t s);

/// out[i][:dim] = g * x[i] * rsqrt(mean(x[i]^2) + eps), weight type, row stride ld (padding zero).
/// x float32 [n][dim]. RMSNorm: Zhang & Sennrich 2019; llama2.c rmsnorm().
void rmsnorm_rows(ElemType wtype, const float* x, const float* g, float eps, int n, int dim, void* out, int ld,
                  cudaStream_t s);

/// gu (weight type) [n][2*hidden] with (gate_i, up_i) interleaved -> out[i][j] = silu(gate) * up,
/// weight type, row stride ld.
void swiglu_rows(ElemType wtype, const void* gu, int n, int hidden, void* out, int ld, cudaStream_t s);

}  // namespace atlas::kernels
