#pragma once
// Causal attention for prefill without materialised scores (FlashAttention-2: Dao, 2023,
// "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning", Alg. 1):
// each block takes 64 query rows of one head, streams the keys/values of its KV head through
// shared memory 64 at a time, and keeps an online softmax (running max m, sum l) with the output
// in registers. Products run on tensor cores (mma.sync m16n8k16, bf16 in, float32 accumulate);
// P is rounded to bf16 before P.V as in FlashAttention. Work is O(L * keys * d); K/V traffic is
// O(n_heads * ceil(L / 64) * keys * d) (each block streams its KV head's keys, mostly from L2)
// and the L x keys score matrix never leaves the SM.
#include <cuda_runtime_api.h>

#include "kernels/elem_type.hpp"

namespace atlas::kernels {

struct FlashPrefillArgs {
  const void* q = nullptr;      ///< bf16 [n_heads][q_head_stride], row i of head h at h*q_head_stride + i*head_dim
  long long q_head_stride = 0;  ///< elements between heads (L * head_dim for a dense [n_heads][L][d])
  const void* k_cache = nullptr;  ///< bf16 [n_kv_heads][max_seq][head_dim], keys [0, pos0 + L) written
  const void* v_cache = nullptr;
  int max_seq = 0;
  int n_heads = 0, n_kv_heads = 0, head_dim = 0;
  int n_query = 0;              ///< L: query rows (positions pos0 .. pos0 + L - 1)
  int pos0 = 0;                 ///< query row i sees keys [0, pos0 + i] (causal, after a cached prefix)
  float scale = 1.0f;           ///< softmax scale, usually 1/sqrt(head_dim)
  void* out = nullptr;          ///< bf16 row-major [L][out_ld]; head h writes columns [h*d, (h+1)*d)
  int out_ld = 0;
};

/// Whether flash_attention_prefill handles this weight type and head size (bf16; d = 64 or 128).
bool flash_attention_prefill_supported(ElemType wtype, int head_dim);

/// Sets the kernels' shared-memory opt-in (68 KiB at d = 128) on the current device. Call once
/// per device before the first launch (cudaFuncSetAttribute is not a stream operation).
void flash_attention_prefill_prepare();

/// Enqueues the attention of `a.n_query` rows on `stream`. No allocation. Alignment: q and out
/// 4 bytes, K/V 16 bytes. Throws KernelError for an unsupported head_dim, a head count that is
/// not a multiple of the KV head count, pos0 + n_query > max_seq, or an odd / short out_ld.
void flash_attention_prefill(const FlashPrefillArgs& a, cudaStream_t stream);

}  // namespace atlas::kernels
