#pragma once
// Hugging Face config.json -> ModelConfig (LlamaForCausalLM, Qwen3ForCausalLM).
#include <filesystem>
#include <map>
#include <string>

#include "engine/model_config.hpp"

namespace atlas::engine {

struct HfConfig {
  ModelConfig config;
  /// Fields read but not applied by the engine (e.g. "rope_scaling"), as JSON text, so the
  /// model's provenance records them.
  std::map<std::string, std::string> ignored;
};

/// Reads `file` (a config.json). Architecture from architectures[0] (LlamaForCausalLM,
/// Qwen3ForCausalLM) or else model_type ("llama", "qwen3"). Fields: hidden_size,
/// intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads (default
/// num_attention_heads), head_dim (default hidden_size / num_attention_heads), vocab_size,
/// max_position_embeddings (default 2048 llama, 32768 qwen3, as HF's config classes),
/// rms_norm_eps (default 1e-6), rope_theta (default 10000), tie_word_embeddings (default
/// false). RoPE layout is half (HF rotate_half) for both. Throws EngineError naming the file,
/// the field and the bad value.
HfConfig read_hf_config(const std::filesystem::path& file);

}  // namespace atlas::engine
