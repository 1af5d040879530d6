#include "engine/formats/qwen3_next_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include <unistd.h>

#include "engine/error.hpp"
#include "engine/tokenizer/byte_tokenizer.hpp"

namespace atlas::engine {

std::uint64_t fnv1a64(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::vector<HfTensor> qwen3_next_hf_tensors(const ModelConfig& c) {
  using I = HfInit;
  const std::int64_t d = c.dim, v = c.vocab_size, hd = c.head_dim, q = c.q_dim(), kv = c.kv_dim();
  std::vector<HfTensor> t;
  t.push_back({"model.embed_tokens.weight", "token_embd.weight", {v, d}, -1, I::embedding});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string h = "model.layers." + std::to_string(l) + ".", g = "blk." + std::to_string(l) + ".";
    const BlockKind k = c.block(l);
    t.push_back({h + "input_layernorm.weight", g + "attn_norm.weight", {d}, -1, I::zero_centred_norm});
    if (k.mixer == MixerKind::gated_deltanet) {
      const std::string a = h + "linear_attn.";
      t.push_back({a + "in_proj_qkvz.weight", g + "ssm_in.weight", {c.gdn_qkvz_dim(), d}, -1, I::matrix});
      t.push_back({a + "in_proj_ba.weight", g + "ssm_ba.weight", {2LL * c.gdn_v_heads, d}, -1, I::matrix});
      t.push_back({a + "conv1d.weight", g + "ssm_conv1d.weight", {c.gdn_conv_dim(), 1, c.gdn_conv_kernel}, -1, I::matrix});
      t.push_back({a + "dt_bias", g + "ssm_dt.bias", {c.gdn_v_heads}, -1, I::dt_bias});
      t.push_back({a + "A_log", g + "ssm_a", {c.gdn_v_heads}, -1, I::a_log});
      t.push_back({a + "norm.weight", g + "ssm_norm.weight", {c.gdn_v_head_dim}, -1, I::norm});
      t.push_back({a + "out_proj.weight", g + "ssm_out.weight", {d, c.gdn_value_dim()}, -1, I::matrix});
    } else {
      const std::string a = h + "self_attn.";
      t.push_back({a + "q_proj.weight", g + "attn_q.weight", {k.mixer == MixerKind::gated_attention ? 2 * q : q, d}, -1, I::matrix});
      t.push_back({a + "k_proj.weight", g + "attn_k.weight", {kv, d}, -1, I::matrix});
      t.push_back({a + "v_proj.weight", g + "attn_v.weight", {kv, d}, -1, I::matrix});
      t.push_back({a + "o_proj.weight", g + "attn_output.weight", {d, q}, -1, I::matrix});
      t.push_back({a + "q_norm.weight", g + "attn_q_norm.weight", {hd}, -1, I::zero_centred_norm});
      t.push_back({a + "k_norm.weight", g + "attn_k_norm.weight", {hd}, -1, I::zero_centred_norm});
    }
    t.push_back({h + "post_attention_layernorm.weight", g + "post_attention_norm.weight", {d}, -1, I::zero_centred_norm});
    if (k.ffn == FfnKind::moe) {
      const std::string m = h + "mlp.";
      const std::int64_t eh = c.expert_hidden_dim, sh = c.shared_expert_hidden_dim;
      t.push_back({m + "gate.weight", g + "ffn_gate_inp.weight", {c.n_experts, d}, -1, I::matrix});
      for (int e = 0; e < c.n_experts; ++e) {
        const std::string x = m + "experts." + std::to_string(e) + ".";
        t.push_back({x + "gate_proj.weight", g + "ffn_gate_exps.weight", {eh, d}, e, I::matrix});
        t.push_back({x + "up_proj.weight", g + "ffn_up_exps.weight", {eh, d}, e, I::matrix});
        t.push_back({x + "down_proj.weight", g + "ffn_down_exps.weight", {d, eh}, e, I::matrix});
      }
      if (sh > 0) {
        t.push_back({m + "shared_expert.gate_proj.weight", g + "ffn_gate_shexp.weight", {sh, d}, -1, I::matrix});
        t.push_back({m + "shared_expert.up_proj.weight", g + "ffn_up_shexp.weight", {sh, d}, -1, I::matrix});
        t.push_back({m + "shared_expert.down_proj.weight", g + "ffn_down_shexp.weight", {d, sh}, -1, I::matrix});
        t.push_back({m + "shared_expert_gate.weight", g + "ffn_gate_inp_shexp.weight", {1, d}, -1, I::matrix});
      }
    } else {
      const std::string m = h + "mlp.";
      t.push_back({m + "gate_proj.weight", g + "ffn_gate.weight", {c.hidden_dim, d}, -1, I::matrix});
      t.push_back({m + "up_proj.weight", g + "ffn_up.weight", {c.hidden_dim, d}, -1, I::matrix});
      t.push_back({m + "down_proj.weight", g + "ffn_down.weight", {d, c.hidden_dim}, -1, I::matrix});
    }
  }
  t.push_back({"model.norm.weight", "output_norm.weight", {d}, -1, I::zero_centred_norm});
  if (!c.tied_embeddings) t.push_back({"lm_head.weight", "output.weight", {v, d}, -1, I::matrix});
  return t;
}

SyntheticTensor qwen3_next_synthetic(const HfTensor& t, std::uint64_t seed) {
  SyntheticTensor s;
  s.stream = splitmix64(seed ^ fnv1a64(t.hf_name));
  s.values = 1;
  for (auto d : t.shape) s.values *= d;
  switch (t.init) {
    case HfInit::matrix: {
      const std::int64_t fan_in = t.shape.back();
      int lg = 0;
      while ((std::int64_t{1} << (lg + 1)) <= fan_in) ++lg;  // floor(log2(fan_in))
      s.scale = std::ldexp(1.0f, -(lg / 2));
      break;
    }
    case HfInit::embedding: break;
    case HfInit::zero_centred_norm:
      s.scale = 0.125f;
      s.map = SyntheticTensor::Map::one_plus;
      break;
    case HfInit::norm: s.offset = 1.0f; s.scale = 0.125f; break;
    case HfInit::a_log:
      s.offset = -1.0f;
      s.scale = 0.5f;
      s.map = SyntheticTensor::Map::neg_exp;
      break;
    case HfInit::dt_bias: s.offset = 1.0f; s.scale = 0.25f; break;
  }
  return s;
}

void qwen3_next_random_values(const HfTensor& t, std::uint64_t seed, float* out, std::int64_t n) {
  const SyntheticTensor s = qwen3_next_synthetic(t, seed);
  for (std::int64_t k = 0; k < n; ++k) out[k] = synthetic_value(s, k);
}

float qwen3_next_engine_value(HfInit init, float v) {
  switch (init) {
    case HfInit::zero_centred_norm: return 1.0f + v;
    case HfInit::a_log: return -std::exp(v);
    default: return v;
  }
}

namespace {
/// Calls f(grouped_row, from_gate, split_row) for every row of in_proj_qkvz.
template <class F>
void for_qkvz_rows(const ModelConfig& c, F f) {
  const int kh = c.gdn_k_heads, dk = c.gdn_k_head_dim, r = c.gdn_v_heads / c.gdn_k_heads, rv = r * c.gdn_v_head_dim;
  const int key_dim = c.gdn_key_dim(), group = 2 * dk + 2 * rv;
  for (int g = 0; g < kh; ++g) {
    const int base = g * group;
    for (int i = 0; i < dk; ++i) f(base + i, false, g * dk + i);
    for (int i = 0; i < dk; ++i) f(base + dk + i, false, key_dim + g * dk + i);
    for (int i = 0; i < rv; ++i) f(base + 2 * dk + i, false, 2 * key_dim + g * rv + i);
    for (int i = 0; i < rv; ++i) f(base + 2 * dk + rv + i, true, g * rv + i);
  }
}
}  // namespace

std::vector<std::pair<bool, int>> qkvz_grouped_sources(const ModelConfig& c) {
  std::vector<std::pair<bool, int>> out(static_cast<std::size_t>(c.gdn_qkvz_dim()));
  for_qkvz_rows(c, [&](int gi, bool from_gate, int si) { out[static_cast<std::size_t>(gi)] = {from_gate, si}; });
  return out;
}

void qkvz_grouped_from_split(const ModelConfig& c, const float* qkv, const float* gate, float* grouped) {
  const std::size_t d = static_cast<std::size_t>(c.dim);
  for_qkvz_rows(c, [&](int gi, bool from_gate, int si) {
    const float* src = (from_gate ? gate : qkv) + static_cast<std::size_t>(si) * d;
    std::copy(src, src + d, grouped + static_cast<std::size_t>(gi) * d);
  });
}

void qkvz_split_from_grouped(const ModelConfig& c, const float* grouped, float* qkv, float* gate) {
  const std::size_t d = static_cast<std::size_t>(c.dim);
  for_qkvz_rows(c, [&](int gi, bool from_gate, int si) {
    const float* src = grouped + static_cast<std::size_t>(gi) * d;
    std::copy(src, src + d, (from_gate ? gate : qkv) + static_cast<std::size_t>(si) * d);
  });
}

std::vector<Weight> split_experts(const Weight& stacked, int n_experts) {
  std::vector<Weight> out;
  if (stacked.empty() || n_experts <= 0) return out;
  const std::size_t per = stacked.size() / static_cast<std::size_t>(n_experts);
  for (int e = 0; e < n_experts; ++e) out.push_back(stacked.subspan(static_cast<std::size_t>(e) * per, per));
  return out;
}

Model make_random_qwen3_next(const ModelConfig& config, std::uint64_t seed) {
  Model m;
  m.config = config;
  const auto tensors = qwen3_next_hf_tensors(config);
  // One buffer per GGUF tensor (experts stacked in order).
  std::map<std::string, std::int64_t> sizes;
  for (const auto& t : tensors) {
    std::int64_t n = 1;
    for (auto s : t.shape) n *= s;
    sizes[t.gguf_name] += n;
  }
  std::int64_t total = 0;
  for (const auto& [name, n] : sizes) total += n;
  // The release-sized presets (qwen3-next-80b-a3b, -e64) exist for their dimensions and byte
  // counts; as float32 host arrays they do not fit a normal machine: say so instead of failing
  // an allocation (or the OOM killer) half-way.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const double need_gb = static_cast<double>(total) * 4 / 1e9, have_gb = pages > 0 && page > 0 ? static_cast<double>(pages) * page / 1e9 : 0.0;
  if (have_gb > 0 && need_gb > 0.8 * have_gb)
    throw EngineError("model '" + config.name + "': " + std::to_string(total) + " parameters need " + std::to_string(static_cast<long>(need_gb)) +
                      " GB as float32 host weights, more than 80% of this machine's " + std::to_string(static_cast<long>(have_gb)) +
                      " GB of memory (random weights are built as float32)");
  std::shared_ptr<float[]> buf = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(total));
  m.keep_alive(buf);
  std::map<std::string, std::span<float>> spans;
  std::int64_t used = 0;
  for (const auto& [name, n] : sizes) {
    spans[name] = std::span<float>(buf.get() + used, static_cast<std::size_t>(n));
    used += n;
  }
  for (const auto& t : tensors) {
    std::int64_t n = 1;
    for (auto s : t.shape) n *= s;
    float* dst = spans[t.gguf_name].data() + (t.expert >= 0 ? t.expert * n : 0);
    qwen3_next_random_values(t, seed, dst, n);
    for (std::int64_t k = 0; k < n; ++k) dst[k] = qwen3_next_engine_value(t.init, dst[k]);
  }
  auto get = [&](const std::string& name) -> std::span<const float> {
    auto it = spans.find(name);
    return it == spans.end() ? std::span<const float>() : std::span<const float>(it->second);
  };
  ModelWeights& w = m.weights;
  w.tok_embd = get("token_embd.weight");
  w.output_norm = get("output_norm.weight");
  w.output = config.tied_embeddings ? w.tok_embd : Weight(get("output.weight"));
  w.layers.resize(static_cast<std::size_t>(config.n_layers));
  for (int l = 0; l < config.n_layers; ++l) {
    const std::string g = "blk." + std::to_string(l) + ".";
    LayerWeights& L = w.layers[static_cast<std::size_t>(l)];
    L.attn_norm = get(g + "attn_norm.weight");
    L.ffn_norm = get(g + "post_attention_norm.weight");
    L.wq = get(g + "attn_q.weight");
    L.wk = get(g + "attn_k.weight");
    L.wv = get(g + "attn_v.weight");
    L.wo = get(g + "attn_output.weight");
    L.q_norm = get(g + "attn_q_norm.weight");
    L.k_norm = get(g + "attn_k_norm.weight");
    L.gdn = {get(g + "ssm_in.weight"), get(g + "ssm_ba.weight"), get(g + "ssm_conv1d.weight"), get(g + "ssm_dt.bias"),
             get(g + "ssm_a"), get(g + "ssm_norm.weight"), get(g + "ssm_out.weight")};
    L.w_gate = get(g + "ffn_gate.weight");
    L.w_up = get(g + "ffn_up.weight");
    L.w_down = get(g + "ffn_down.weight");
    L.moe = {get(g + "ffn_gate_inp.weight"), split_experts(get(g + "ffn_gate_exps.weight"), config.n_experts),
             split_experts(get(g + "ffn_up_exps.weight"), config.n_experts), split_experts(get(g + "ffn_down_exps.weight"), config.n_experts),
             get(g + "ffn_gate_inp_shexp.weight"), get(g + "ffn_gate_shexp.weight"), get(g + "ffn_up_shexp.weight"),
             get(g + "ffn_down_shexp.weight")};
  }
  if (config.vocab_size >= 259) m.tokenizer = make_byte_tokenizer(config.vocab_size);
  m.source.format = "preset";
  m.source.preset = config.name;
  m.source.seed = seed;
  return m;
}

}  // namespace atlas::engine
