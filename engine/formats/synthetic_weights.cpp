#include "engine/formats/synthetic_weights.hpp"

#include <cmath>

#include "engine/formats/qwen3_next_tensors.hpp"

namespace atlas::engine {

namespace {

/// make_random_model's table for the dense architectures: one stream per tensor numbered by the
/// fill order (embedding, final norm, output, then per layer attn_norm, q, k, v, o, q/k norms,
/// ffn_norm, gate, up, down).
std::map<std::string, SyntheticTensor> dense_tensors(const ModelConfig& c, std::uint64_t seed) {
  std::map<std::string, SyntheticTensor> out;
  std::uint64_t index = 0;
  auto add = [&](const std::string& name, std::int64_t n, std::int64_t fan_in, bool norm) {
    SyntheticTensor t;
    t.stream = splitmix64(seed ^ splitmix64(++index));
    t.scale = norm ? 0.1f : 1.0f / std::sqrt(static_cast<float>(fan_in));
    t.offset = norm ? 1.0f : 0.0f;
    t.values = n;
    out[name] = t;
  };
  const std::int64_t d = c.dim, hid = c.hidden_dim, v = c.vocab_size, q = c.q_dim(), kv = c.kv_dim(), hd = c.head_dim;
  add("token_embd", v * d, 1, false);
  add("output_norm", d, 0, true);
  if (!c.tied_embeddings) add("output", v * d, d, false);
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm", d, 0, true);
    add(b + "attn_q", q * d, d, false);
    add(b + "attn_k", kv * d, d, false);
    add(b + "attn_v", kv * d, d, false);
    add(b + "attn_output", d * q, q, false);
    if (c.qk_norm) {
      add(b + "attn_q_norm", hd, 0, true);
      add(b + "attn_k_norm", hd, 0, true);
    }
    add(b + "ffn_norm", d, 0, true);
    add(b + "ffn_gate", hid * d, d, false);
    add(b + "ffn_up", hid * d, d, false);
    add(b + "ffn_down", d * hid, hid, false);
  }
  return out;
}

/// The engine name of a Qwen3-Next tensor: the GGUF name without ".weight", the post-attention
/// norm under the dense name the ffn blocks use, "[e]" for expert e of a stacked tensor.
std::string engine_name(const HfTensor& t) {
  std::string n = t.gguf_name;
  if (n.ends_with(".weight")) n.resize(n.size() - 7);
  if (n.ends_with(".post_attention_norm")) n = n.substr(0, n.size() - 19) + "ffn_norm";
  if (t.expert >= 0) {  // appended piece by piece: gcc 12 -O3 flags the concatenation with a false -Wrestrict
    n += '[';
    n += std::to_string(t.expert);
    n += ']';
  }
  return n;
}

}  // namespace

std::map<std::string, SyntheticTensor> synthetic_tensors(const ModelConfig& config, std::uint64_t seed) {
  if (config.arch != Arch::qwen3_next) return dense_tensors(config, seed);
  std::map<std::string, SyntheticTensor> out;
  for (const HfTensor& t : qwen3_next_hf_tensors(config)) out[engine_name(t)] = qwen3_next_synthetic(t, seed);
  return out;
}

float synthetic_value(const SyntheticTensor& t, std::int64_t k) {
  const std::uint64_t bits = splitmix64(t.stream + static_cast<std::uint64_t>(k));
  const float u = static_cast<float>(static_cast<std::int64_t>(bits >> 40) - (1 << 23)) * (1.0f / (1 << 23));
  const volatile float product = t.scale * u;  // volatile: rounded before the sum, never an FMA
  return t.offset + product;
}

void synthetic_engine_values(const SyntheticTensor& t, std::int64_t first, std::int64_t n, float* out) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = synthetic_value(t, first + i);
    switch (t.map) {
      case SyntheticTensor::Map::none: out[i] = v; break;
      case SyntheticTensor::Map::one_plus: out[i] = 1.0f + v; break;
      case SyntheticTensor::Map::neg_exp: out[i] = -std::exp(v); break;
    }
  }
}

}  // namespace atlas::engine
