#include "engine/formats/qwen3_next_hf_writer.hpp"

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/formats/qwen3_next_tensors.hpp"
#include "engine/formats/safetensors.hpp"

namespace atlas::engine {

void write_qwen3_next_hf_dir(const std::filesystem::path& dir, const ModelConfig& c, std::uint64_t seed, DType dtype) {
  if (c.arch != Arch::qwen3_next) throw EngineError(dir.string() + ": model '" + c.name + "' is not a qwen3_next model");
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    throw EngineError(dir.string() + ": dtype " + std::string(to_string(dtype)) + " is not a safetensors dtype (f32, f16, bf16)");
  nlohmann::ordered_json j;
  j["architectures"] = {"Qwen3NextForCausalLM"};
  j["model_type"] = "qwen3_next";
  j["_name_or_path"] = c.name;
  j["hidden_size"] = c.dim;
  j["intermediate_size"] = c.hidden_dim > 0 ? c.hidden_dim : 1;  // unused: every layer is MoE
  j["num_hidden_layers"] = c.n_layers;
  j["num_attention_heads"] = c.n_heads;
  j["num_key_value_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim;
  j["max_position_embeddings"] = c.max_seq_len;
  j["rms_norm_eps"] = c.rms_eps;
  j["rope_theta"] = c.rope_theta;
  j["partial_rotary_factor"] = static_cast<double>(c.rot_dim()) / c.head_dim;
  j["linear_num_key_heads"] = c.gdn_k_heads;
  j["linear_num_value_heads"] = c.gdn_v_heads;
  j["linear_key_head_dim"] = c.gdn_k_head_dim;
  j["linear_value_head_dim"] = c.gdn_v_head_dim;
  j["linear_conv_kernel_dim"] = c.gdn_conv_kernel;
  j["num_experts"] = c.n_experts;
  j["num_experts_per_tok"] = c.n_experts_used;
  j["moe_intermediate_size"] = c.expert_hidden_dim;
  j["shared_expert_intermediate_size"] = c.shared_expert_hidden_dim;
  j["norm_topk_prob"] = c.norm_topk_prob;
  j["decoder_sparse_step"] = 1;
  j["mlp_only_layers"] = nlohmann::json::array();
  nlohmann::json types = nlohmann::json::array();
  for (int l = 0; l < c.n_layers; ++l) {
    const BlockKind k = c.block(l);
    if (k.ffn != FfnKind::moe) throw EngineError(dir.string() + ": layer " + std::to_string(l) + " has a dense ffn; this writer writes all-MoE models");
    types.push_back(k.mixer == MixerKind::gated_deltanet ? "linear_attention" : "full_attention");
  }
  j["layer_types"] = types;
  j["tie_word_embeddings"] = c.tied_embeddings;
  j["vocab_size"] = c.vocab_size;
  j["torch_dtype"] = dtype == DType::bf16 ? "bfloat16" : dtype == DType::f16 ? "float16" : "float32";

  const auto list = qwen3_next_hf_tensors(c);
  std::vector<std::vector<float>> values;
  std::vector<SafetensorsTensor> ts;
  values.reserve(list.size());
  for (const auto& t : list) {
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    values.emplace_back(static_cast<std::size_t>(n));
    qwen3_next_random_values(t, seed, values.back().data(), n);
    ts.push_back({t.hf_name, dtype, t.shape, values.back()});
  }
  std::filesystem::create_directories(dir);
  atlas::write_file_atomic(dir / "config.json", j.dump(1) + "\n");
  atlas::write_file_atomic(dir / "model.safetensors", safetensors_bytes(ts));
}

}  // namespace atlas::engine
