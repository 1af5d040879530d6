#pragma once
// The Gated DeltaNet core (Yang, Kautz, Hatamizadeh 2024, "Gated Delta Networks"), as Hugging
// Face transformers' Qwen3-Next computes it (modeling_qwen3_next.py: torch_recurrent_gated_delta_rule,
// torch_chunk_gated_delta_rule, torch_causal_conv1d_update, l2norm; transformers 5.17, the version
// the parity references were made with: docs/PERF.md).
// One value head at a time; the state S is [k_dim][v_dim] float32 (HF's layout).
#include <span>

namespace atlas::engine::cpu {

/// One decode step of one value head, in place on S [dk][dv]:
///   S <- S * exp(g);  m = S^T k;  delta = beta * (v - m);  S <- S + k delta^T;  o = S^T q.
/// q must already be L2-normalised and scaled by dk^-1/2, k L2-normalised. o: [dv].
void gdn_recurrent_step(float* S, const float* q, const float* k, const float* v, float g, float beta, float* o, int dk, int dv);

/// The same recurrence over n tokens in the chunked (WY) form of torch_chunk_gated_delta_rule
/// with chunks of `chunk` tokens: inside a chunk, the delta rule's triangular system is solved by
/// forward substitution and the chunk's outputs come from S at the chunk start plus an
/// intra-chunk attention. Equal to n recurrent steps up to float rounding; costs O(n chunk d)
/// matrix products instead of n rank-1 updates. q, k: [n][q_stride] (head at offset 0), v:
/// [n][v_stride], g, beta: [n] (stride g_stride), o: [n][o_stride]; S updated to the state after
/// the n tokens.
struct GdnSeq {
  const float* q;
  const float* k;
  const float* v;
  const float* g;
  const float* beta;
  float* o;
  int q_stride, k_stride, v_stride, gb_stride, o_stride;
};
void gdn_chunked(float* S, const GdnSeq& s, int n, int dk, int dv, int chunk = 64);
/// n recurrent steps over the same layout (the reference gdn_chunked is tested against).
void gdn_recurrent(float* S, const GdnSeq& s, int n, int dk, int dv);

/// x <- x / sqrt(sum x^2 + eps) (HF l2norm, eps 1e-6 in Qwen3-Next).
void l2_normalize(float* x, int n, float eps);

/// Causal depthwise conv1d + SiLU over n tokens of `channels` channels, continuing from
/// `state` [channels][kernel - 1] (the previous kernel - 1 inputs, oldest first; zeros at the
/// start of a sequence), which is advanced to the last kernel - 1 inputs. x, y: [n][ld]
/// (channel c at offset c); w: [channels][kernel], tap kernel - 1 multiplies the newest input.
void causal_conv1d_silu(const float* x, float* y, int n, int ld, int channels, const float* w, int kernel, float* state);

/// Gated RMSNorm of one value head (HF Qwen3NextRMSNormGated, "norm before gate"):
/// o[i] = w[i] * x[i] / sqrt(mean(x^2) + eps) * silu(z[i]); o may alias x.
void gated_rmsnorm(float* o, const float* x, const float* z, const float* w, int n, float eps);

}  // namespace atlas::engine::cpu
