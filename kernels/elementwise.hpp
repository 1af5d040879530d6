#pragma once
// Small kernels around the matrix products: embedding gather, row RMSNorm, SwiGLU, greedy
// argmax and temperature sampling, weight conversion/padding and on-device synthetic weights.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

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

/// *out = index of the largest of v[0..n) (the lowest index wins a tie; NaN never wins).
/// Many blocks scan slices; the last to finish (an atomic ticket) reduces their partials.
/// `scratch` holds argmax_scratch_bytes(), zeroed once before first use (the kernel leaves it so).
void argmax(const float* v, int n, int* out, void* scratch, cudaStream_t s);
std::size_t argmax_scratch_bytes();

/// Sampling parameters read from device memory at run time, so one captured graph serves any.
struct DeviceSampling {
  float temperature = 0.0f;      ///< T; 0 = greedy
  std::uint32_t reserved = 0;
  std::uint64_t seed = 0;        ///< one fresh value per draw (the host draws it from its sampler's RNG)
};

/// *out = a token drawn from softmax(v / T) by the Gumbel-max trick (Gumbel 1954; Maddison,
/// Tarlow & Minka 2014, "A* Sampling"): argmax_i v_i / T + g_i with g_i i.i.d. standard Gumbel
/// noise from a counter hash of (seed, i) (computed as v_i + T g_i: no overflow at tiny T), one
/// pass, no sort. params null or temperature 0:
/// the argmax of v (as argmax()). params is device memory; scratch as for argmax().
void sample_token(const float* v, int n, const DeviceSampling* params, int* out, void* scratch, cudaStream_t s);

/// dst[r * pitch + c] (weight type) = src[r][c] (float32, row stride cols) for c < cols, zero for
/// cols <= c < ld. pitch >= ld (pitch > ld interleaves two matrices, e.g. gate and up rows).
void convert_rows(ElemType wtype, const float* src, int rows, int cols, void* dst, int ld, int pitch, cudaStream_t s);

/// out[i][c] (float32, row stride cols), 0 <= i < rows, 0 <= c < cols: value (row * cols + c) of
/// a synthetic tensor (engine/formats/synthetic_weights.hpp: offset + scale * u from
/// splitmix64(stream + k), bit for bit what the host draws), row = row_ids ? row_ids[i] (device
/// memory) : first_row + i. Weights of a preset generated where they live, with no host copy.
void synthetic_rows(float* out, int rows, int cols, const int* row_ids, std::int64_t first_row, std::uint64_t stream,
                    float scale, float offset, cudaStream_t s);

}  // namespace atlas::kernels
