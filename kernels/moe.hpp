#pragma once
// Sparse mixture-of-experts decode kernels (Qwen3-Next: HF Qwen3NextSparseMoeBlock; Shazeer et al.
// 2017 top-k gating). One decode step of a moe ffn is five launches and no host round trip:
// the router GEMV (kernels/gemv.hpp; the shared expert's gate is the router's last row), the
// normed input in the weight type (rmsnorm_rows), moe_topk, moe_gate_up and moe_down. The
// selected experts are read from device memory, so one captured graph serves every routing, and
// only the selected experts' rows are read. No float atomics: the combine runs in a fixed order.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/elem_type.hpp"

namespace atlas::kernels {

struct MoeTopkArgs {
  const float* logits = nullptr;  ///< [n_experts] router logits, then the shared gate's logit if shared
  int n_experts = 0;
  int k = 0;                      ///< experts per token (1..32)
  bool norm_topk = true;          ///< renormalise the k probabilities to sum 1 (HF norm_topk_prob)
  bool shared = false;            ///< weights[k] = sigmoid(logits[n_experts]) (else 0)
  int* ids = nullptr;             ///< out [k]: expert ids, highest probability first
  float* weights = nullptr;       ///< out [k + 1]: routing weights, then the shared expert's gate
  /// Device [k]: experts chosen elsewhere (routing on the host, ATLAS_MOE_HOST_ROUTING); the
  /// kernel then only computes their weights, with the same arithmetic. Null: choose here.
  const int* chosen = nullptr;
  /// Device: a running hash of every routing this layer chose, updated per step (FNV-1a over
  /// the ids in choice order); null: none. Lets two runs prove they routed identically without
  /// copying ids per step.
  unsigned long long* fingerprint = nullptr;
  /// > 1: a prefill chunk, row t's logits at logits + t * logits_ld, its ids at ids + t * k,
  /// its weights at weights + t * (k + 1), its given choice at chosen + t * k; the fingerprint
  /// takes the rows in order (a second, single-thread launch).
  int n_rows = 1;
  int logits_ld = 0;
};
/// softmax over the experts in float32, the k largest (an exact tie goes to the lower expert id,
/// as the CPU backend), renormalised when norm_topk. One launch, a block per row (and one more
/// for the fingerprint of a chunk). With `chosen`, the given experts in the given order instead
/// of the k largest.
void moe_topk(const MoeTopkArgs& a, cudaStream_t stream);

/// The experts of one layer, stacked in one allocation so one launch reaches all of them.
struct MoeExperts {
  const void* gate_up = nullptr;  ///< [n_experts][2 hidden][ld_in]: rows (gate_i, up_i) interleaved
  const void* down = nullptr;     ///< [n_experts][dim][ld_hidden]
  int hidden = 0;                 ///< per-expert intermediate size
  int ld_hidden = 0;              ///< padded_ld(hidden)
};

struct MoeArgs {
  ElemType wtype = ElemType::bf16;
  int dim = 0, ld_in = 0;         ///< model dim and its padded row stride
  int k = 0;                      ///< selected experts
  MoeExperts routed;
  MoeExperts shared;              ///< gate_up null: no shared expert
  const int* ids = nullptr;       ///< [k] from moe_topk
  const float* weights = nullptr;  ///< [k + 1] from moe_topk
  const void* x = nullptr;        ///< weight type [ld_in]: the normed input
  void* h = nullptr;              ///< workspace, weight type [k + 1][ld_h] (zero padding)
  int ld_h = 0;                   ///< >= max(routed.ld_hidden, shared.ld_hidden)
  float* y = nullptr;             ///< float32 [dim]: y += sum_i weights[i] expert_i(x) (+ shared)
  /// > 1: a prefill chunk, token t's x at x + t * x_ld, y at y + t * y_ld, ids / weights /
  /// h rows at t * k, t * (k + 1), t * (k + 1) * ld_h. Each token's arithmetic is the one-token
  /// step's (so a chunk equals its tokens decoded one by one), and each token reads its own
  /// experts' rows: grouping the chunk's tokens by expert (one read per expert) is the faster
  /// prefill still to come.
  int n_tokens = 1;
  int x_ld = 0, y_ld = 0;
};
/// h[i] = silu(gate . x) * (up . x) for each selected expert (and the shared one). One launch.
void moe_gate_up(const MoeArgs& a, cudaStream_t stream);
/// y[j] += sum_i weights[i] (down_i[j] . h[i]) + weights[k] (shared_down[j] . h[k]), summed in
/// that order. One launch.
void moe_down(const MoeArgs& a, cudaStream_t stream);

}  // namespace atlas::kernels
