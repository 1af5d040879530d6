#include "engine/formats/hf_config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/formats/json_input.hpp"

namespace atlas::engine {

namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& field, const std::string& what) {
  throw EngineError(file.string() + ": field '" + field + "': " + what);
}

int get_int(const std::filesystem::path& file, const json& j, const char* key, std::optional<int> def) {
  if (!j.contains(key) || j[key].is_null()) {
    if (def) return *def;
    bad(file, key, "missing");
  }
  const json& v = j[key];
  if (!v.is_number_integer() || v.get<long long>() <= 0 || v.get<long long>() > std::numeric_limits<int>::max())
    bad(file, key, "expected a positive integer, got " + v.dump());
  return v.get<int>();
}

float get_float(const std::filesystem::path& file, const json& j, const char* key, float def) {
  if (!j.contains(key) || j[key].is_null()) return def;
  const json& v = j[key];
  if (!v.is_number() || !(v.get<double>() > 0.0) || !std::isfinite(v.get<double>())) bad(file, key, "expected a positive number, got " + v.dump());
  return static_cast<float>(v.get<double>());
}

/// Qwen3NextConfig fields (transformers configuration_qwen3_next.py): linear_* (Gated DeltaNet),
/// num_experts / num_experts_per_tok / moe_intermediate_size / shared_expert_intermediate_size /
/// norm_topk_prob, layer_types (else derived from full_attention_interval, default 4),
/// decoder_sparse_step / mlp_only_layers (dense swiglu layers).
void read_qwen3_next_fields(const std::filesystem::path& file, const json& j, ModelConfig& c) {
  c.qk_norm = true;
  c.gdn_k_heads = get_int(file, j, "linear_num_key_heads", 16);
  c.gdn_v_heads = get_int(file, j, "linear_num_value_heads", 32);
  c.gdn_k_head_dim = get_int(file, j, "linear_key_head_dim", 128);
  c.gdn_v_head_dim = get_int(file, j, "linear_value_head_dim", 128);
  c.gdn_conv_kernel = get_int(file, j, "linear_conv_kernel_dim", 4);
  if (c.gdn_v_heads % c.gdn_k_heads != 0)
    bad(file, "linear_num_value_heads", std::to_string(c.gdn_v_heads) + " is not a multiple of linear_num_key_heads " + std::to_string(c.gdn_k_heads));
  c.n_experts = get_int(file, j, "num_experts", 512);
  c.n_experts_used = get_int(file, j, "num_experts_per_tok", 10);
  if (c.n_experts_used > c.n_experts)
    bad(file, "num_experts_per_tok", std::to_string(c.n_experts_used) + " exceeds num_experts " + std::to_string(c.n_experts));
  c.expert_hidden_dim = get_int(file, j, "moe_intermediate_size", 512);
  c.shared_expert_hidden_dim = j.contains("shared_expert_intermediate_size") && j["shared_expert_intermediate_size"] == 0
                                   ? 0 : get_int(file, j, "shared_expert_intermediate_size", 512);
  if (j.contains("norm_topk_prob")) {
    if (!j["norm_topk_prob"].is_boolean()) bad(file, "norm_topk_prob", "expected a bool, got " + j["norm_topk_prob"].dump());
    c.norm_topk_prob = j["norm_topk_prob"].get<bool>();
  }
  const int interval = get_int(file, j, "full_attention_interval", 4);
  c.blocks = qwen3_next_blocks(c.n_layers, interval);
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    const json& lt = j["layer_types"];
    if (!lt.is_array() || lt.size() != static_cast<std::size_t>(c.n_layers))
      bad(file, "layer_types", "expected a list of num_hidden_layers = " + std::to_string(c.n_layers) + " entries, got " + lt.dump());
    for (std::size_t i = 0; i < lt.size(); ++i) {
      if (lt[i] == "linear_attention") c.blocks[i].mixer = MixerKind::gated_deltanet;
      else if (lt[i] == "full_attention") c.blocks[i].mixer = MixerKind::gated_attention;
      else bad(file, "layer_types[" + std::to_string(i) + "]", lt[i].dump() + " is not a layer type (expected \"linear_attention\" or \"full_attention\")");
    }
  }
  const int sparse_step = get_int(file, j, "decoder_sparse_step", 1);
  std::vector<int> mlp_only;
  if (j.contains("mlp_only_layers") && !j["mlp_only_layers"].is_null()) {
    if (!j["mlp_only_layers"].is_array()) bad(file, "mlp_only_layers", "expected a list, got " + j["mlp_only_layers"].dump());
    for (const auto& v : j["mlp_only_layers"]) {
      if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= c.n_layers)
        bad(file, "mlp_only_layers", v.dump() + " is not a layer index below num_hidden_layers " + std::to_string(c.n_layers));
      mlp_only.push_back(v.get<int>());
    }
  }
  for (int i = 0; i < c.n_layers; ++i) {  // HF Qwen3NextDecoderLayer: MoE unless mlp-only or off the sparse step
    const bool moe = std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end() && (i + 1) % sparse_step == 0;
    c.blocks[static_cast<std::size_t>(i)].ffn = moe ? FfnKind::moe : FfnKind::swiglu;
  }
}

}  // namespace

HfConfig read_hf_config(const std::filesystem::path& file) {
  const json j = read_json_input(file);  // depth-checked: the error messages below print values
  if (!j.is_object()) throw EngineError(file.string() + ": expected a JSON object");
  HfConfig out;
  ModelConfig& c = out.config;
  std::string arch_name;
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() && j["architectures"][0].is_string()) {
    arch_name = j["architectures"][0].get<std::string>();
    if (arch_name == "LlamaForCausalLM") c.arch = Arch::llama;
    else if (arch_name == "Qwen3ForCausalLM") c.arch = Arch::qwen3;
    else if (arch_name == "Qwen3NextForCausalLM") c.arch = Arch::qwen3_next;
    else bad(file, "architectures", "\"" + arch_name + "\" is not supported (supported: LlamaForCausalLM, Qwen3ForCausalLM, Qwen3NextForCausalLM)");
  } else if (j.contains("model_type") && j["model_type"].is_string()) {
    arch_name = j["model_type"].get<std::string>();
    if (arch_name == "llama") c.arch = Arch::llama;
    else if (arch_name == "qwen3") c.arch = Arch::qwen3;
    else if (arch_name == "qwen3_next") c.arch = Arch::qwen3_next;
    else bad(file, "model_type", "\"" + arch_name + "\" is not supported (supported: llama, qwen3, qwen3_next)");
  } else {
    bad(file, "architectures", "missing (and no model_type)");
  }
  const bool qwen = c.arch == Arch::qwen3 || c.arch == Arch::qwen3_next;
  c.name = j.contains("_name_or_path") && j["_name_or_path"].is_string() ? j["_name_or_path"].get<std::string>() : file.parent_path().filename().string();
  c.dim = get_int(file, j, "hidden_size", std::nullopt);
  c.hidden_dim = get_int(file, j, "intermediate_size", std::nullopt);
  c.n_layers = get_int(file, j, "num_hidden_layers", std::nullopt);
  // Each layer owns tensors, so real checkpoints have a few hundred at most. The bound keeps a
  // corrupt or hostile config.json from sizing (and looping over) billions of blocks before any
  // tensor is read: qwen3_next_blocks builds one per layer (2^31 - 1 layers: 16 GiB).
  constexpr int kMaxLayers = 1 << 16;
  if (c.n_layers > kMaxLayers)
    bad(file, "num_hidden_layers", std::to_string(c.n_layers) + " exceeds " + std::to_string(kMaxLayers) + " (no checkpoint has that many layers)");
  c.n_heads = get_int(file, j, "num_attention_heads", std::nullopt);
  c.n_kv_heads = get_int(file, j, "num_key_value_heads", c.n_heads);
  c.head_dim = get_int(file, j, "head_dim", c.dim / c.n_heads);
  c.vocab_size = get_int(file, j, "vocab_size", std::nullopt);
  c.max_seq_len = get_int(file, j, "max_position_embeddings", qwen ? 32768 : 2048);
  c.rms_eps = get_float(file, j, "rms_norm_eps", 1e-6f);
  c.rope_theta = get_float(file, j, "rope_theta", c.arch == Arch::qwen3_next ? 10000000.0f : 10000.0f);
  // transformers >= 5 writes RoPE settings into rope_parameters.
  float partial_rotary = c.arch == Arch::qwen3_next ? get_float(file, j, "partial_rotary_factor", 0.25f) : 1.0f;
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
    const json& rp = j["rope_parameters"];
    if (rp.contains("rope_type") && rp["rope_type"] != "default")
      bad(file, "rope_parameters.rope_type", rp["rope_type"].dump() + " is not supported (supported: \"default\")");
    c.rope_theta = get_float(file, rp, "rope_theta", c.rope_theta);
    if (c.arch == Arch::qwen3_next) partial_rotary = get_float(file, rp, "partial_rotary_factor", partial_rotary);
  }
  if (c.arch == Arch::qwen3_next) {
    if (partial_rotary > 1.0f) bad(file, "partial_rotary_factor", std::to_string(partial_rotary) + " exceeds 1");
    c.rope_dim = static_cast<int>(static_cast<float>(c.head_dim) * partial_rotary);  // HF: int(head_dim * factor)
    read_qwen3_next_fields(file, j, c);
  }
  c.rope_layout = RopeLayout::half;
  c.qk_norm = qwen;
  if (j.contains("tie_word_embeddings")) {
    if (!j["tie_word_embeddings"].is_boolean()) bad(file, "tie_word_embeddings", "expected a bool, got " + j["tie_word_embeddings"].dump());
    c.tied_embeddings = j["tie_word_embeddings"].get<bool>();
  }
  if (j.contains("hidden_act") && j["hidden_act"] != "silu") bad(file, "hidden_act", j["hidden_act"].dump() + " is not supported (supported: \"silu\")");
  for (const char* k : {"rope_scaling", "attention_bias", "mlp_bias", "sliding_window"}) {
    if (j.contains(k) && !j[k].is_null() && j[k] != false) out.ignored[k] = j[k].dump();
  }
  if ((j.contains("attention_bias") && j["attention_bias"] == true) || (j.contains("mlp_bias") && j["mlp_bias"] == true))
    bad(file, j.contains("attention_bias") && j["attention_bias"] == true ? "attention_bias" : "mlp_bias", "true is not supported (no bias tensors)");
  return out;
}

}  // namespace atlas::engine
