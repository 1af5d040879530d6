#pragma once
// The model description every format loader produces and every backend consumes.
#include <string>

namespace atlas::engine {

enum class Arch { llama, qwen3 };

/// How RoPE pairs the dimensions of a head.
/// - interleaved: pairs (2i, 2i+1) — llama2.c, GGUF "normal" rope (llama.cpp LLAMA_ROPE_TYPE_NORM).
/// - half: pairs (i, i + head_dim/2) — Hugging Face rotate_half (GPT-NeoX style), Qwen3.
enum class RopeLayout { interleaved, half };

struct ModelConfig {
  Arch arch = Arch::llama;
  std::string name;          ///< human-readable (general.name, preset name, file stem)
  int dim = 0;               ///< hidden size (d_model)
  int hidden_dim = 0;        ///< FFN intermediate size
  int n_layers = 0;
  int n_heads = 0;           ///< query heads
  int n_kv_heads = 0;        ///< key/value heads (GQA when < n_heads)
  int head_dim = 0;          ///< per-head size; Qwen3 decouples it from dim / n_heads
  int vocab_size = 0;
  int max_seq_len = 0;       ///< context length the engine allows (KV cache capacity)
  float rms_eps = 1e-5f;     ///< RMSNorm epsilon
  float rope_theta = 10000.0f;
  RopeLayout rope_layout = RopeLayout::interleaved;
  bool tied_embeddings = false;  ///< lm_head shares token embedding
  bool qk_norm = false;          ///< Qwen3 per-head RMSNorm on q and k

  int q_dim() const { return n_heads * head_dim; }
  int kv_dim() const { return n_kv_heads * head_dim; }
  /// Number of weight parameters (embedding counted once when tied).
  long long parameter_count() const;
};

const char* to_string(Arch a);
const char* to_string(RopeLayout r);

}  // namespace atlas::engine
