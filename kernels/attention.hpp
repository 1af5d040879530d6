#pragma once
// Attention kernels over a KV cache laid out per layer as K,V [n_kv_heads][max_seq][head_dim]
// (head-major, so one head's keys are contiguous), in the weight type.
//
// Decode: where the shape allows (head_dim 64/128/256, sm_90), the thread-block-cluster kernel
// of kernels/attention_decode_cluster.hpp; otherwise the split-K kernel here.
// Split-K ("flash-decoding", Dao et al. 2023): grid (kv head, split); each block takes
// the G = n_heads / n_kv_heads query heads of its group over one slice of the keys, keeps an
// online-softmax partial (max, sum, unnormalised output), and the last block of a head to finish
// (an atomic ticket) merges the partials; with one slice the block normalises its output itself.
// Scores are computed by teams of lanes per key (16-byte coalesced loads, shuffle reduction;
// ATLAS_ATTN_SCORES=thread selects the first version's one thread per key). The block owning
// the new position first applies q/k RMSNorm (Qwen3) and RoPE and writes the new K/V into the
// cache, so one launch does q/k-norm, RoPE, the cache write and attention.
//
// Prefill: qk-norm + RoPE + cache write for L tokens (rope_prefill); attention itself is
// kernels/flash_prefill.hpp, or, for shapes it does not take, scores and P.V through cuBLAS
// (caller) with the causal row softmax and head-major -> row-major transpose here.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernels/elem_type.hpp"

namespace atlas::kernels {

/// Where q, k and v of one token sit in the projected vector and how they are normalised/rotated.
struct HeadPrep {
  int n_heads = 0, n_kv_heads = 0, head_dim = 0;
  const float* q_norm = nullptr;  ///< float32 [head_dim] or null (no qk-norm)
  const float* k_norm = nullptr;
  float eps = 1e-6f;
  float rope_base = 10000.0f;
  bool rope_interleaved = true;  ///< pairs (2i,2i+1); false: (i, i+d/2)
  /// Rotated dims per head (partial RoPE, Qwen3-Next: the first rope_dim of head_dim rotate with
  /// theta_i = pos * base^(-2i/rope_dim), the rest pass through); 0 = head_dim. A partial RoPE
  /// always runs the split-K decode kernel.
  int rope_dim = 0;
};

struct DecodeAttentionArgs {
  ElemType wtype = ElemType::bf16;
  HeadPrep prep;
  const float* qkv = nullptr;  ///< [q_dim + 2 kv_dim] float32: q, then k, then v
  void* k_cache = nullptr;     ///< this layer's K [n_kv][max_seq][d]
  void* v_cache = nullptr;
  int max_seq = 0;
  const int* pos = nullptr;    ///< device: position of the new token (KV length = pos + 1)
  /// device float32 [head_dim]: (cos, sin) of each RoPE pair's angle at *pos (RopeTable in
  /// elementwise.hpp), written by an earlier kernel of the step; null: the kernel computes them.
  /// Used by the cluster kernel.
  const float* rope_cs = nullptr;
  int n_splits = 1;            ///< key slices per head (fixed per captured graph); 1: no merge
  int chunk_cap = 0;           ///< most keys one slice can get (bucket / n_splits)
  float* part_o = nullptr;     ///< workspace [n_kv][n_splits][G][d]
  float* part_ml = nullptr;    ///< workspace [n_kv][n_splits][G][2]
  int* tickets = nullptr;      ///< [n_kv], zero between launches (the last block resets it)
  void* out = nullptr;         ///< weight type [n_heads * d]
};

/// Reads and checks the decode attention's environment knobs (ATLAS_ATTN_*) now rather than at
/// the first launch (see gemv_read_env_knobs). Throws atlas::InputError.
void attention_read_env_knobs();

/// Decode attention for one new token. Uses the cluster kernel (attention_decode_cluster.hpp)
/// where it takes the shape, else the split-K kernel here; ATLAS_ATTN_KERNEL=split forces the
/// latter (A/B runs). a.n_splits must come from attention_decode_splits.
void attention_decode(const DecodeAttentionArgs& a, cudaStream_t stream);
/// Key slices per head for a context bucket of `bucket` keys (fixed per captured graph): about
/// 32 keys per slice; at most 16 (cluster kernel) or 32 (split-K kernel, one slice per merge
/// lane). ATLAS_ATTN_KEYS_PER_SPLIT=N overrides the 32 (A/B runs).
int attention_decode_splits(ElemType wtype, int group, int head_dim, int bucket, int rope_dim = 0);
/// The split-K kernel alone (any shape attention_decode takes; n_splits in [1, 32], the
/// workspace and tickets of DecodeAttentionArgs are used). Tests and A/B runs.
void attention_decode_split(const DecodeAttentionArgs& a, cudaStream_t stream);
/// Sets the kernel's dynamic shared-memory limit (call once before capture).
void attention_decode_prepare(ElemType wtype, int group, int head_dim, int chunk_cap, int rope_dim = 0);
/// Dynamic shared memory one block needs.
std::size_t attention_decode_smem(int group, int head_dim, int chunk_cap, ElemType wtype);

struct RopePrefillArgs {
  ElemType wtype = ElemType::bf16;
  HeadPrep prep;
  const float* qkv = nullptr;  ///< [L][qkv_ld] float32
  int qkv_ld = 0;
  int n_tokens = 0;            ///< L
  int pos = 0;                 ///< position of the first token
  void* q_out = nullptr;       ///< weight type [n_heads][L][d] (the 1/sqrt(d) scale is left to the caller)
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  int max_seq = 0;
};
void rope_prefill(const RopePrefillArgs& a, cudaStream_t stream);

/// Causal softmax of scores S (float32 [rows][ld], already scaled) into P (weight type, same
/// shape). Row r is query position pos0 + (r % n_query) and sees keys [0, that position]; every
/// other column up to ld (masked keys, padding) gets 0.
void causal_softmax(ElemType wtype, const float* s, void* p, int rows, int n_query, int ld, int pos0,
                    cudaStream_t stream);

/// Head-major O [n_heads][L][d] -> row-major [L][ld] (weight type).
void heads_to_rows(ElemType wtype, const void* o, void* out, int n_heads, int n_tokens, int head_dim,
                   int ld, cudaStream_t stream);

}  // namespace atlas::kernels
