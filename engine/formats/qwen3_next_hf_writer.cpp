#include "engine/formats/qwen3_next_hf_writer.hpp"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/formats/qwen3_next_tensors.hpp"
#include "engine/formats/safetensors.hpp"

namespace atlas::engine {

std::string qwen3_next_hf_safetensors(const ModelConfig& c, std::uint64_t seed, DType dtype) {
  const auto list = qwen3_next_hf_tensors(c);
  std::vector<std::vector<float>> values;  // the tensors' spans point into these
  std::vector<SafetensorsTensor> ts;
  values.reserve(list.size());
  for (const auto& t : list) {
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    values.emplace_back(static_cast<std::size_t>(n));
    qwen3_next_random_values(t, seed, values.back().data(), n);
    ts.push_back({t.hf_name, dtype, t.shape, values.back()});
  }
  return safetensors_bytes(ts);
}

void write_qwen3_next_hf_dir(const std::filesystem::path& dir, const ModelConfig& c, std::uint64_t seed, DType dtype) {
  if (c.arch != Arch::qwen3_next) throw EngineError(dir.string() + ": model '" + c.name + "' is not a qwen3_next model");
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    throw EngineError(dir.string() + ": dtype " + std::string(to_string(dtype)) + " is not a safetensors dtype (f32, f16, bf16)");
  nlohmann::json layer_types = nlohmann::json::array();
  for (int l = 0; l < c.n_layers; ++l) {
    const BlockKind k = c.block(l);
    if (k.ffn != FfnKind::moe) throw EngineError(dir.string() + ": layer " + std::to_string(l) + " has a dense ffn; this writer writes all-MoE models");
    layer_types.push_back(k.mixer == MixerKind::gated_deltanet ? "linear_attention" : "full_attention");
  }
  // Hugging Face's Qwen3NextConfig keys, in the order transformers writes them.
  const nlohmann::ordered_json j = {
      {"architectures", {"Qwen3NextForCausalLM"}},
      {"model_type", "qwen3_next"},
      {"_name_or_path", c.name},
      {"hidden_size", c.dim},
      {"intermediate_size", c.hidden_dim > 0 ? c.hidden_dim : 1},  // unused: every layer is MoE
      {"num_hidden_layers", c.n_layers},
      // gated attention
      {"num_attention_heads", c.n_heads}, {"num_key_value_heads", c.n_kv_heads}, {"head_dim", c.head_dim},
      {"max_position_embeddings", c.max_seq_len}, {"rms_norm_eps", c.rms_eps}, {"rope_theta", c.rope_theta},
      {"partial_rotary_factor", static_cast<double>(c.rot_dim()) / c.head_dim},
      // Gated DeltaNet
      {"linear_num_key_heads", c.gdn_k_heads}, {"linear_num_value_heads", c.gdn_v_heads}, {"linear_key_head_dim", c.gdn_k_head_dim},
      {"linear_value_head_dim", c.gdn_v_head_dim}, {"linear_conv_kernel_dim", c.gdn_conv_kernel},
      // sparse MoE with a shared expert, on every layer
      {"num_experts", c.n_experts}, {"num_experts_per_tok", c.n_experts_used}, {"moe_intermediate_size", c.expert_hidden_dim},
      {"shared_expert_intermediate_size", c.shared_expert_hidden_dim}, {"norm_topk_prob", c.norm_topk_prob},
      {"decoder_sparse_step", 1}, {"mlp_only_layers", nlohmann::json::array()},
      {"layer_types", layer_types},
      {"tie_word_embeddings", c.tied_embeddings},
      {"vocab_size", c.vocab_size},
      {"torch_dtype", dtype == DType::bf16 ? "bfloat16" : dtype == DType::f16 ? "float16" : "float32"},
  };
  std::filesystem::create_directories(dir);
  atlas::write_file_atomic(dir / "config.json", j.dump(1) + "\n");
  atlas::write_file_atomic(dir / "model.safetensors", qwen3_next_hf_safetensors(c, seed, dtype));
}

}  // namespace atlas::engine
