#pragma once
// Gated DeltaNet decode kernels (Yang, Kautz & Hatamizadeh 2024, "Gated Delta Networks: Improving
// Mamba2 with Delta Rule", arXiv:2412.06464), as Hugging Face transformers' Qwen3-Next computes
// one token (modeling_qwen3_next.py: torch_causal_conv1d_update, l2norm,
// torch_recurrent_gated_delta_rule, Qwen3NextRMSNormGated). The CPU reference is
// engine/cpu/gdn.cpp.
//
// One decode step of a gated_deltanet layer is four launches: the in_proj GEMV (kernels/gemv.hpp)
// writes the projections [q | k | v | z | b | a] (float32), gdn_conv_decode runs the causal
// conv1d + SiLU over [q | k | v] and advances the conv state, gdn_recurrence_decode does the rest
// of the mixer up to out_proj's input (L2 norm, gates, the delta rule on the float32 state,
// the gated RMSNorm), and the out_proj GEMV adds into the residual stream. No float atomics:
// replaying a captured step is bit-identical to launching it eagerly.
#include <cuda_runtime_api.h>

#include "kernels/elem_type.hpp"

// GdnShape's sizes are used by host code and by the kernels.
#ifdef __CUDACC__
#define ATLAS_GDN_HD __host__ __device__
#else
#define ATLAS_GDN_HD
#endif

namespace atlas::kernels {

/// Shapes of one gated_deltanet layer (HF linear_num_key_heads, linear_num_value_heads,
/// linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim).
struct GdnShape {
  int k_heads = 0, v_heads = 0, k_dim = 0, v_dim = 0, conv_kernel = 0;
  ATLAS_GDN_HD int key_dim() const { return k_heads * k_dim; }
  ATLAS_GDN_HD int value_dim() const { return v_heads * v_dim; }
  ATLAS_GDN_HD int conv_dim() const { return 2 * key_dim() + value_dim(); }
  /// Floats of the in_proj output: [q | k | v | z | b | a].
  ATLAS_GDN_HD int proj_dim() const { return conv_dim() + value_dim() + 2 * v_heads; }
};

struct GdnConvArgs {
  GdnShape shape;
  const float* proj = nullptr;  ///< [n_tokens][proj_ld]: channels [0, conv_dim) are the conv's input
  const float* weight = nullptr;  ///< float32 [conv_dim][conv_kernel]; tap kernel-1 is the newest input
  float* state = nullptr;       ///< float32 [conv_dim][conv_kernel - 1], oldest first; advanced in place
  float* out = nullptr;         ///< float32 [n_tokens][out_ld] = silu(conv)
  int n_tokens = 1;             ///< > 1: a prefill chunk, its tokens in order
  int proj_ld = 0, out_ld = 0;  ///< row strides (floats) when n_tokens > 1
};
/// Causal depthwise conv1d + SiLU of n_tokens tokens in order (a thread per channel walks them:
/// each token's arithmetic is the one-token step's), continuing from the rolling state. One launch.
void gdn_conv_decode(const GdnConvArgs& a, cudaStream_t stream);

struct GdnRecurrenceArgs {
  GdnShape shape;
  ElemType wtype = ElemType::bf16;     ///< type of `out`
  const float* conv = nullptr;   ///< [n_tokens][conv_ld]: q [key_dim] | k [key_dim] | v [value_dim] after conv + SiLU
  const float* proj = nullptr;   ///< [n_tokens][proj_ld]: the in_proj output (z at conv_dim, b after z, a after b)
  const float* a_neg = nullptr;  ///< float32 [v_heads]: -exp(A_log)
  const float* dt_bias = nullptr;  ///< float32 [v_heads]
  const float* norm = nullptr;   ///< float32 [v_dim]: gated RMSNorm weight
  float eps = 1e-6f;             ///< gated RMSNorm epsilon
  float* state = nullptr;        ///< float32 [v_heads][k_dim][v_dim], updated in place
  void* out = nullptr;           ///< weight type [n_tokens][out_ld] (out_proj's input; padding untouched)
  int n_tokens = 1;              ///< > 1: a prefill chunk, the recurrence run over its tokens in order
  int conv_ld = 0, proj_ld = 0, out_ld = 0;  ///< row strides (elements) when n_tokens > 1
};
/// Per value head h (key head h / (v_heads / k_heads), HF repeat_interleave):
///   q, k <- l2norm(q), l2norm(k) (eps 1e-6), q *= k_dim^-1/2
///   g = a_neg[h] * softplus(a + dt_bias[h]);  beta = sigmoid(b)
///   S <- S exp(g);  delta = beta (v - S^T k);  S <- S + k delta^T;  o = S^T q
///   out = norm * o / sqrt(mean(o^2) + eps) * silu(z)
/// One launch (a block per value head; a prefill chunk's tokens run in order inside it, each with
/// the one-token arithmetic, so a chunk equals its tokens decoded one by one given the same
/// inputs; the chunked WY form of Yang et al. is the faster prefill still to come). Throws
/// KernelError for v_dim > 1024 or k_dim > 1024.
void gdn_recurrence_decode(const GdnRecurrenceArgs& a, cudaStream_t stream);

}  // namespace atlas::kernels
