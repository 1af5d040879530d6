#pragma once
// The model description every format loader produces and every backend consumes.
//
// A model is a list of blocks; block l is (mixer kind, ffn kind) (`ModelConfig::block(l)`):
//   x += mixer(RMSNorm(x));  x += ffn(RMSNorm(x))
// Dense Llama/Qwen3 are the special case where every block is (attention, swiglu). Qwen3-Next
// (Hugging Face `Qwen3NextForCausalLM`) interleaves gated_deltanet and gated_attention mixers,
// with a moe ffn on every layer.
#include <optional>
#include <string>
#include <vector>

namespace atlas::engine {

enum class Arch { llama, qwen3, qwen3_next };

/// How RoPE pairs the dimensions of a head.
/// - interleaved: pairs (2i, 2i+1) — llama2.c, GGUF "normal" rope (llama.cpp LLAMA_ROPE_TYPE_NORM).
/// - half: pairs (i, i + rot_dim/2) — Hugging Face rotate_half (GPT-NeoX style), Qwen3.
enum class RopeLayout { interleaved, half };

/// The token mixer of a block.
/// - attention: softmax attention with a KV cache (Llama, Qwen3; optional per-head q/k norm).
/// - gated_attention: Qwen3-Next full attention: q_proj emits [query | gate] interleaved per
///   head, q/k RMSNorm, partial RoPE, output * sigmoid(gate) before o_proj.
/// - gated_deltanet: Qwen3-Next linear attention (Gated DeltaNet, Yang et al. 2024): causal
///   conv1d state + a fp32 recurrent state per value head, no KV cache.
enum class MixerKind { attention, gated_attention, gated_deltanet };
/// The feed-forward of a block: swiglu (dense SwiGLU MLP) or moe (top-k routed SwiGLU experts
/// plus an optional sigmoid-gated shared expert).
enum class FfnKind { swiglu, moe };

struct BlockKind {
  MixerKind mixer = MixerKind::attention;
  FfnKind ffn = FfnKind::swiglu;
  bool operator==(const BlockKind&) const = default;
};

struct ModelConfig {
  Arch arch = Arch::llama;
  std::string name;          ///< human-readable (general.name, preset name, file stem)
  int dim = 0;               ///< hidden size (d_model)
  int hidden_dim = 0;        ///< dense FFN intermediate size (swiglu blocks)
  int n_layers = 0;
  int n_heads = 0;           ///< query heads (attention kinds)
  int n_kv_heads = 0;        ///< key/value heads (GQA when < n_heads)
  int head_dim = 0;          ///< per-head size; Qwen3 decouples it from dim / n_heads
  int vocab_size = 0;
  int max_seq_len = 0;       ///< context length the engine allows (KV cache capacity)
  float rms_eps = 1e-5f;     ///< RMSNorm epsilon
  float rope_theta = 10000.0f;
  RopeLayout rope_layout = RopeLayout::interleaved;
  bool tied_embeddings = false;  ///< lm_head shares token embedding
  bool qk_norm = false;          ///< per-head RMSNorm on q and k (Qwen3, Qwen3-Next)
  int rope_dim = 0;              ///< rotated dims per head (partial RoPE); 0 = head_dim

  /// Kind of each block, [n_layers]; empty = every block is (attention, swiglu).
  std::vector<BlockKind> blocks;

  // Gated DeltaNet (HF linear_*): key heads, value heads (a multiple of key heads), head dims,
  // causal conv kernel width.
  int gdn_k_heads = 0, gdn_v_heads = 0, gdn_k_head_dim = 0, gdn_v_head_dim = 0, gdn_conv_kernel = 0;
  // MoE (HF num_experts, num_experts_per_tok, moe_intermediate_size,
  // shared_expert_intermediate_size (0 = no shared expert), norm_topk_prob).
  int n_experts = 0, n_experts_used = 0, expert_hidden_dim = 0, shared_expert_hidden_dim = 0;
  bool norm_topk_prob = true;

  BlockKind block(int layer) const { return blocks.empty() ? BlockKind{} : blocks[static_cast<std::size_t>(layer)]; }
  /// True when every block is (attention, swiglu) (Llama, Qwen3 dense).
  bool is_dense() const;
  int rot_dim() const { return rope_dim > 0 ? rope_dim : head_dim; }
  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  int gdn_key_dim() const { return gdn_k_heads * gdn_k_head_dim; }
  int gdn_value_dim() const { return gdn_v_heads * gdn_v_head_dim; }
  int gdn_conv_dim() const { return 2 * gdn_key_dim() + gdn_value_dim(); }   ///< conv channels [q | k | v]
  int gdn_qkvz_dim() const { return 2 * gdn_key_dim() + 2 * gdn_value_dim(); }
  /// Number of weight parameters (embedding counted once when tied).
  long long parameter_count() const;
  /// Parameters read per decoded token (MoE: only the routed experts and the shared one).
  long long active_parameter_count() const;
};

const char* to_string(Arch a);
const char* to_string(RopeLayout r);
const char* to_string(MixerKind k);
const char* to_string(FfnKind k);


/// The Qwen3-Next layer pattern: layer i is gated_attention iff (i + 1) % interval == 0, else
/// gated_deltanet; every ffn is moe (HF `full_attention_interval`, decoder_sparse_step 1).
std::vector<BlockKind> qwen3_next_blocks(int n_layers, int full_attention_interval);

}  // namespace atlas::engine
