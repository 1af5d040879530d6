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

/// Weights of one transformer block. Matrices are row-major [out][in] (y = W x).
struct LayerWeights {
  std::span<const float> attn_norm;  ///< [dim]
  std::span<const float> wq;         ///< [q_dim][dim]
  std::span<const float> wk;         ///< [kv_dim][dim]
  std::span<const float> wv;         ///< [kv_dim][dim]
  std::span<const float> wo;         ///< [dim][q_dim]
  std::span<const float> q_norm;     ///< [head_dim], empty unless config.qk_norm
  std::span<const float> k_norm;     ///< [head_dim], empty unless config.qk_norm
  std::span<const float> ffn_norm;   ///< [dim]
  std::span<const float> w_gate;     ///< [hidden_dim][dim]  (llama2.c w1)
  std::span<const float> w_up;       ///< [hidden_dim][dim]  (llama2.c w3)
  std::span<const float> w_down;     ///< [dim][hidden_dim]  (llama2.c w2)
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
  std::filesystem::path tokenizer_path;  ///< llama2.c: tok*.bin; empty = look beside the model
};

/// Loads a model, detecting the format: a directory with config.json (safetensors), a file
/// starting with "GGUF" (GGUF v2/v3), otherwise a llama2.c checkpoint (legacy or "ak42").
/// Throws EngineError naming the file, the field and the bad value.
Model load_model(const std::filesystem::path& path, const LoadOptions& opts = {});

}  // namespace atlas::engine
