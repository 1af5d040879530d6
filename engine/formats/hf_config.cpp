#include "engine/formats/hf_config.hpp"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"

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

}  // namespace

HfConfig read_hf_config(const std::filesystem::path& file) {
  json j;
  try {
    j = json::parse(atlas::read_file(file));
  } catch (const json::exception& e) {
    throw EngineError(file.string() + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw EngineError(file.string() + ": expected a JSON object");
  HfConfig out;
  ModelConfig& c = out.config;
  std::string arch_name;
  if (j.contains("architectures") && j["architectures"].is_array() && !j["architectures"].empty() && j["architectures"][0].is_string()) {
    arch_name = j["architectures"][0].get<std::string>();
    if (arch_name == "LlamaForCausalLM") c.arch = Arch::llama;
    else if (arch_name == "Qwen3ForCausalLM") c.arch = Arch::qwen3;
    else bad(file, "architectures", "\"" + arch_name + "\" is not supported (supported: LlamaForCausalLM, Qwen3ForCausalLM)");
  } else if (j.contains("model_type") && j["model_type"].is_string()) {
    arch_name = j["model_type"].get<std::string>();
    if (arch_name == "llama") c.arch = Arch::llama;
    else if (arch_name == "qwen3") c.arch = Arch::qwen3;
    else bad(file, "model_type", "\"" + arch_name + "\" is not supported (supported: llama, qwen3)");
  } else {
    bad(file, "architectures", "missing (and no model_type)");
  }
  const bool qwen = c.arch == Arch::qwen3;
  c.name = j.contains("_name_or_path") && j["_name_or_path"].is_string() ? j["_name_or_path"].get<std::string>() : file.parent_path().filename().string();
  c.dim = get_int(file, j, "hidden_size", std::nullopt);
  c.hidden_dim = get_int(file, j, "intermediate_size", std::nullopt);
  c.n_layers = get_int(file, j, "num_hidden_layers", std::nullopt);
  c.n_heads = get_int(file, j, "num_attention_heads", std::nullopt);
  c.n_kv_heads = get_int(file, j, "num_key_value_heads", c.n_heads);
  c.head_dim = get_int(file, j, "head_dim", c.dim / c.n_heads);
  c.vocab_size = get_int(file, j, "vocab_size", std::nullopt);
  c.max_seq_len = get_int(file, j, "max_position_embeddings", qwen ? 32768 : 2048);
  c.rms_eps = get_float(file, j, "rms_norm_eps", 1e-6f);
  c.rope_theta = get_float(file, j, "rope_theta", 10000.0f);
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
