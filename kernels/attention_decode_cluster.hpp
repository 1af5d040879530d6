#pragma once
// Decode attention for one new token, by thread-block clusters (sm_90): grid (slice, kv head,
// head block), one cluster per (kv head, block of 2 of its query heads, 1 for odd groups)
// holding all S key slices.
//
// Why a second kernel: the split-K kernel in attention.cu is a chain of barrier-separated
// phases (q prep into shared memory, scores, softmax, P.V, key-group reduction, partial publish,
// atomic ticket, merge from L2); ncu measured it at 20 us for ~1 MB of K/V (0.24 waves, 11 cycles
// per issued instruction). Here every warp works in registers start to finish:
// - lanes of a key group (head_dim / 8 lanes for bf16) hold one key's 16-byte vectors, so a
//   warp loads 2 keys (d = 128) per instruction, coalesced; the first batch of K and V is loaded
//   before the PDL wait, RoPE cos/sin and the q/k-norm gains are computed/loaded there too;
// - each lane normalises and rotates its own slice of q with shuffles inside the key group (the
//   RMSNorm sum and the rotate_half partner), so there is no shared-memory q and no barrier;
// - scores, an online softmax (base 2) and P.V run per key group over batches of keys, the next
//   batch's loads in flight while the current one is used;
// - key groups merge by shuffles, warps through shared memory (one barrier), and the S slices
//   of the cluster through distributed shared memory (cluster barriers), with no global
//   partials, fences or atomic tickets.
// The block whose slice holds the new position normalises/rotates the new K, writes K/V into
// the cache and scores the new key from registers.
#include <cuda_runtime_api.h>

#include "kernels/attention.hpp"

namespace atlas::kernels {

/// Whether this kernel takes the shape: head_dim 64/128/256 with 16-byte vectors per lane
/// (head_dim / elements-per-vector <= 32), 1 to 8 query heads per KV head, and a device with
/// thread-block clusters (compute capability >= 9.0).
bool attention_decode_cluster_supported(ElemType wtype, int group, int head_dim);

/// Key slices (= cluster size, a power of two <= the device's limit for the kernel, at most 16)
/// for a context bucket of `bucket` keys: about `keys_per_split` keys per slice at short contexts.
int attention_decode_cluster_splits(ElemType wtype, int group, int head_dim, int bucket, int keys_per_split = 32);

/// Kernel attributes (non-portable cluster size 16); call once before capture.
void attention_decode_cluster_prepare(ElemType wtype, int group, int head_dim);

/// a.n_splits must come from attention_decode_cluster_splits; part_o, part_ml, tickets and
/// chunk_cap are not used.
void attention_decode_cluster(const DecodeAttentionArgs& a, cudaStream_t stream);

}  // namespace atlas::kernels
