#pragma once
// The element-wise and attention math of one transformer block, written like llama2.c run.c:
// one small function per formula. Vectors are float32; shapes are given per function.
#include <span>

#include "engine/model_config.hpp"

namespace atlas::engine::cpu {

/// RMSNorm (Zhang & Sennrich 2019; llama2.c rmsnorm()): o[i] = w[i] * x[i] / sqrt(mean(x^2) + eps).
/// o, x, w: [n]; o may alias x.
void rmsnorm(float* o, const float* x, const float* w, int n, float eps);

/// RoPE angles for one position (Su et al. 2021): for pair j < head_dim/2,
/// angle = pos * theta^(-2j / head_dim), computed in float32 as llama2.c does.
/// cos_out, sin_out: [head_dim / 2].
void rope_angles(float* cos_out, float* sin_out, int pos, int head_dim, float theta);

/// Rotates each pair of one head by its angle: (a, b) -> (a cos - b sin, a sin + b cos).
/// interleaved pairs (2j, 2j+1) (llama2.c); half pairs (j, j + head_dim/2) (HF rotate_half).
void rope_apply(float* head, const float* cos, const float* sin, int head_dim, RopeLayout layout);

/// rope_angles + rope_apply for one head at `pos`.
void rope(float* head, int pos, int head_dim, float theta, RopeLayout layout);

/// In-place numerically stable softmax over x[0, n).
void softmax(float* x, int n);

/// Causal scaled dot-product attention of one query head over n_pos cached positions:
/// out = sum_t softmax_t(q . k_t / sqrt(head_dim)) v_t. q, out: [head_dim]; k, v point at
/// position 0 of this KV head, consecutive positions `stride` floats apart; scores: [n_pos]
/// scratch.
void attention(float* out, const float* q, const float* k, const float* v, int n_pos, int head_dim, int stride, float* scores);

/// 1 / (1 + e^-x): the gates of gated attention, the delta rule's beta and the shared expert.
float sigmoid(float x);

/// log(1 + e^x), x for x > 20 (torch.nn.functional.softplus, beta 1, threshold 20): the Gated
/// DeltaNet's decay.
float softplus(float x);

/// SwiGLU gate (Shazeer 2020): gate[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x).
void swiglu(float* gate, const float* up, int n);

/// Residual add: x[i] += y[i].
void add(float* x, const float* y, int n);

}  // namespace atlas::engine::cpu
