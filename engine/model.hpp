#pragma once
// A loaded model: its description, its weights as float32 host spans, and the storage that owns
// them (a memory mapping of the file, or buffers of dequantized/generated values).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/model_config.hpp"

namespace atlas::engine {

/// Weights of a gated_deltanet mixer, in the Hugging Face checkpoint layout (which llama.cpp's
/// qwen3next GGUF keeps for ssm_in / ssm_beta_alpha). Matrices are row-major [out][in].
struct DeltaNetWeights {
  /// [qkvz_dim][dim]: rows grouped by key head g: [q (k_head_dim) | k (k_head_dim) |
  /// v (r*v_head_dim) | z (r*v_head_dim)], r = v_heads / k_heads (HF in_proj_qkvz).
  std::span<const float> in_qkvz;
  /// [2*v_heads][dim]: rows grouped by key head: [b (r) | a (r)] (HF in_proj_ba).
  std::span<const float> in_ba;
  std::span<const float> conv1d;   ///< [conv_dim][conv_kernel], channels [q | k | v] (depthwise, no bias)
  std::span<const float> dt_bias;  ///< [v_heads]
  std::span<const float> a;        ///< [v_heads] = -exp(A_log) (as llama.cpp's ssm_a stores it)
  std::span<const float> norm;     ///< [v_head_dim] gated RMSNorm weight (plain, not zero-centred)
  std::span<const float> out;      ///< [dim][value_dim]
};

/// Weights of a moe ffn. Experts are stacked: expert e's gate matrix is rows
/// [e*expert_hidden, (e+1)*expert_hidden) of gate_exps.
struct MoeWeights {
  std::span<const float> router;       ///< [n_experts][dim]
  std::span<const float> gate_exps;    ///< [n_experts][expert_hidden][dim]
  std::span<const float> up_exps;      ///< [n_experts][expert_hidden][dim]
  std::span<const float> down_exps;    ///< [n_experts][dim][expert_hidden]
  std::span<const float> shared_gate;  ///< [dim] sigmoid gate of the shared expert (1 output)
  std::span<const float> gate_shexp;   ///< [shared_hidden][dim]; all four empty without a shared expert
  std::span<const float> up_shexp;     ///< [shared_hidden][dim]
  std::span<const float> down_shexp;   ///< [dim][shared_hidden]
};

/// Weights of one block; which members are set depends on ModelConfig::block(l). Matrices are
/// row-major [out][in] (y = W x). RMSNorm weights are the multiplier applied (a zero-centred
/// checkpoint norm w is stored as 1 + w, as llama.cpp's GGUF does).
struct LayerWeights {
  std::span<const float> attn_norm;  ///< [dim] (the mixer's input norm)
  // attention / gated_attention
  std::span<const float> wq;         ///< [q_dim][dim]; gated_attention: [2*q_dim][dim], per head [query | gate]
  std::span<const float> wk;         ///< [kv_dim][dim]
  std::span<const float> wv;         ///< [kv_dim][dim]
  std::span<const float> wo;         ///< [dim][q_dim]
  std::span<const float> q_norm;     ///< [head_dim], empty unless config.qk_norm
  std::span<const float> k_norm;     ///< [head_dim], empty unless config.qk_norm
  DeltaNetWeights gdn;               ///< gated_deltanet
  std::span<const float> ffn_norm;   ///< [dim] (the ffn's input norm; HF post_attention_layernorm)
  // swiglu
  std::span<const float> w_gate;     ///< [hidden_dim][dim]  (llama2.c w1)
  std::span<const float> w_up;       ///< [hidden_dim][dim]  (llama2.c w3)
  std::span<const float> w_down;     ///< [dim][hidden_dim]  (llama2.c w2)
  MoeWeights moe;                    ///< moe
};

struct ModelWeights {
  std::span<const float> tok_embd;     ///< [vocab][dim]
  std::vector<LayerWeights> layers;    ///< [n_layers]
  std::span<const float> output_norm;  ///< [dim]
  std::span<const float> output;       ///< [vocab][dim]; aliases tok_embd when tied
};

/// Where a model came from (for record provenance).
struct ModelSource {
  std::filesystem::path path;   ///< file or directory; empty for in-memory presets
  std::string format;           ///< "gguf" | "llama2c" | "safetensors" | "preset"
  std::string preset;           ///< preset name when format == "preset"
  std::uint64_t seed = 0;       ///< preset seed
  std::map<std::string, std::string> metadata;  ///< selected key/values (e.g. GGUF general.*)
};

class Tokenizer;

/// Move-only owner of everything a backend needs. The spans in `weights` point into `storage_`.
class Model {
 public:
  ModelConfig config;
  ModelWeights weights;
  ModelSource source;
  std::shared_ptr<const Tokenizer> tokenizer;  ///< null for models without one (synthetic presets)

  Model() = default;
  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  /// Keeps a buffer alive for the model's lifetime and returns a span over it.
  std::span<const float> own(std::vector<float> values);
  /// Keeps any RAII object (e.g. a file mapping) alive for the model's lifetime.
  void keep_alive(std::shared_ptr<const void> resource) { resources_.push_back(std::move(resource)); }

 private:
  std::vector<std::unique_ptr<std::vector<float>>> storage_;
  std::vector<std::shared_ptr<const void>> resources_;
};

struct LoadOptions {
  int max_seq_len = 0;            ///< 0: the model's own context length
  /// llama2.c: tok*.bin; safetensors directory: a tokenizer.json; empty = look beside the model.
  /// GGUF files carry their own tokenizer and ignore it.
  std::filesystem::path tokenizer_path;
};

/// Loads a model, detecting the format: a directory with config.json (safetensors), a file
/// starting with "GGUF" (GGUF v2/v3), otherwise a llama2.c checkpoint (legacy or "ak42").
/// Throws EngineError naming the file, the field and the bad value.
Model load_model(const std::filesystem::path& path, const LoadOptions& opts = {});

}  // namespace atlas::engine
