#include "engine/formats/presets.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <thread>

#include "engine/error.hpp"
#include "engine/formats/qwen3_next_tensors.hpp"
#include "engine/formats/synthetic_weights.hpp"
#include "engine/formats/weight_builder.hpp"
#include "engine/tokenizer/byte_tokenizer.hpp"

namespace atlas::engine {

namespace {

ModelConfig make(Arch arch, const char* name, int dim, int hidden, int layers, int heads, int kv_heads, int head_dim, int vocab, int ctx,
                 float eps, float theta, bool tied) {
  ModelConfig c;
  c.arch = arch;
  c.name = name;
  c.dim = dim;
  c.hidden_dim = hidden;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.vocab_size = vocab;
  c.max_seq_len = ctx;
  c.rms_eps = eps;
  c.rope_theta = theta;
  c.rope_layout = arch == Arch::qwen3 ? RopeLayout::half : RopeLayout::interleaved;
  c.tied_embeddings = tied;
  c.qk_norm = arch == Arch::qwen3;
  return c;
}

/// Qwen3-Next (the fields of Hugging Face transformers' Qwen3NextConfig, 5.17:
/// models/qwen3_next/configuration_qwen3_next.py).
ModelConfig qwen3_next(const char* name, int dim, int layers, int heads, int kv_heads, int head_dim, int rope_dim, int k_heads,
                       int v_heads, int k_head_dim, int v_head_dim, int experts, int experts_used, int expert_hidden, int shared_hidden,
                       int vocab, int ctx, float theta) {
  ModelConfig c = make(Arch::qwen3, name, dim, 5632, layers, heads, kv_heads, head_dim, vocab, ctx, 1e-6f, theta, false);
  c.arch = Arch::qwen3_next;
  c.rope_dim = rope_dim;
  c.blocks = qwen3_next_blocks(layers, 4);
  c.gdn_k_heads = k_heads;
  c.gdn_v_heads = v_heads;
  c.gdn_k_head_dim = k_head_dim;
  c.gdn_v_head_dim = v_head_dim;
  c.gdn_conv_kernel = 4;
  c.n_experts = experts;
  c.n_experts_used = experts_used;
  c.expert_hidden_dim = expert_hidden;
  c.shared_expert_hidden_dim = shared_hidden;
  c.norm_topk_prob = true;
  return c;
}

struct Fill {
  std::span<float> dst;
  SyntheticTensor draw;  // its per-tensor key, scale and offset (1 for RMSNorm weights)
};

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {"tiny-llama", make(Arch::llama, "tiny-llama", 64, 172, 5, 8, 4, 8, 512, 512, 1e-5f, 10000.0f, true)},
      {"tiny-qwen3", make(Arch::qwen3, "tiny-qwen3", 64, 192, 2, 4, 2, 32, 512, 512, 1e-6f, 1000000.0f, true)},
      {"stories110m", make(Arch::llama, "stories110m", 768, 2048, 12, 12, 12, 64, 32000, 1024, 1e-5f, 10000.0f, true)},
      {"qwen3-0.6b", make(Arch::qwen3, "qwen3-0.6b", 1024, 3072, 28, 16, 8, 128, 151936, 40960, 1e-6f, 1000000.0f, true)},
      {"qwen3-8b", make(Arch::qwen3, "qwen3-8b", 4096, 12288, 36, 32, 8, 128, 151936, 40960, 1e-6f, 1000000.0f, false)},
      {"llama-3.1-8b", make(Arch::llama, "llama-3.1-8b", 4096, 14336, 32, 32, 8, 128, 128256, 131072, 1e-5f, 500000.0f, false)},
      // The anchors' qnext-tiny, vocabulary 512 (keeps reference logits a few KB).
      {"qwen3-next-tiny", qwen3_next("qwen3-next-tiny", 256, 8, 4, 1, 128, 32, 4, 8, 64, 64, 32, 4, 64, 64, 512, 4096, 1e7f)},
      {"qwen3-next-80b-a3b", qwen3_next("qwen3-next-80b-a3b", 2048, 48, 16, 2, 256, 64, 16, 32, 128, 128, 512, 10, 512, 512, 151936, 262144, 1e7f)},
      // Release per-layer shapes (hidden 2048, attention 16/2 x 256, GDN 16/32 x 128, experts of 512
      // + shared 512, top-10) in one 3:1 cycle with 16 experts and a 32k vocabulary: ~0.94 GB bf16,
      // for load-memory measurements on a CPU box.
      {"qwen3-next-e16-l4", qwen3_next("qwen3-next-e16-l4", 2048, 4, 16, 2, 256, 64, 16, 32, 128, 128, 16, 10, 512, 512, 32000, 262144, 1e7f)},
      {"qwen3-next-e64", qwen3_next("qwen3-next-e64", 2048, 48, 16, 2, 256, 64, 16, 32, 128, 128, 64, 10, 512, 512, 151936, 262144, 1e7f)},
  };
  return all;
}

const Preset& find_preset(std::string_view name) {
  for (const auto& p : presets()) {
    if (p.name == name) return p;
  }
  std::string known;
  for (const auto& p : presets()) known += (known.empty() ? "" : ", ") + p.name;
  throw EngineError("preset '" + std::string(name) + "' is unknown (known: " + known + ")");
}

Model make_preset_model(std::string_view name, std::uint64_t seed, int max_seq_len) {
  ModelConfig c = find_preset(name).config;
  if (max_seq_len > 0) c.max_seq_len = max_seq_len;
  return make_random_model(c, seed);
}

Model make_preset_config_model(std::string_view name, std::uint64_t seed, int max_seq_len) {
  Model m;
  m.config = find_preset(name).config;
  if (max_seq_len > 0) m.config.max_seq_len = max_seq_len;
  validate_config(m.config, "model config '" + m.config.name + "'");
  if (m.config.vocab_size >= 259) m.tokenizer = make_byte_tokenizer(m.config.vocab_size);  // as make_random_model
  m.source.format = "preset";
  m.source.preset = m.config.name;
  m.source.seed = seed;
  return m;
}

Model make_random_model(const ModelConfig& config, std::uint64_t seed) {
  validate_config(config, "model config '" + config.name + "'");
  if (config.arch == Arch::qwen3_next) return make_random_qwen3_next(config, seed);
  Model m;
  m.config = config;
  const ModelConfig& c = m.config;
  const std::size_t dim = static_cast<std::size_t>(c.dim), hid = static_cast<std::size_t>(c.hidden_dim), vocab = static_cast<std::size_t>(c.vocab_size),
                    qd = static_cast<std::size_t>(c.q_dim()), kvd = static_cast<std::size_t>(c.kv_dim()), hd = static_cast<std::size_t>(c.head_dim);

  // Carve every tensor out of one buffer, in a fixed order; the order also numbers the streams.
  std::size_t total = vocab * dim + dim + (c.tied_embeddings ? 0 : vocab * dim);
  const std::size_t per_layer = 2 * dim + qd * dim + 2 * kvd * dim + dim * qd + 3 * hid * dim + (c.qk_norm ? 2 * hd : 0);
  total += per_layer * static_cast<std::size_t>(c.n_layers);
  std::shared_ptr<float[]> buf = std::make_unique_for_overwrite<float[]>(total);
  m.keep_alive(buf);

  std::vector<Fill> fills;
  std::size_t used = 0;
  auto take = [&](Weight& slot, std::size_t n, std::size_t fan_in, bool norm) {
    std::span<float> s(buf.get() + used, n);
    used += n;
    const float scale = norm ? 0.1f : 1.0f / std::sqrt(static_cast<float>(fan_in));
    // synthetic_weights.cpp's dense table repeats this order (its test compares the two).
    fills.push_back({s, {splitmix64(seed ^ splitmix64(fills.size() + 1)), scale, norm ? 1.0f : 0.0f}});
    slot = s;
  };
  ModelWeights& w = m.weights;
  take(w.tok_embd, vocab * dim, 1, false);
  take(w.output_norm, dim, 0, true);
  if (!c.tied_embeddings) take(w.output, vocab * dim, dim, false);
  w.layers.resize(static_cast<std::size_t>(c.n_layers));
  for (auto& L : w.layers) {
    take(L.attn_norm, dim, 0, true);
    take(L.wq, qd * dim, dim, false);
    take(L.wk, kvd * dim, dim, false);
    take(L.wv, kvd * dim, dim, false);
    take(L.wo, dim * qd, qd, false);
    if (c.qk_norm) {
      take(L.q_norm, hd, 0, true);
      take(L.k_norm, hd, 0, true);
    }
    take(L.ffn_norm, dim, 0, true);
    take(L.w_gate, hid * dim, dim, false);
    take(L.w_up, hid * dim, dim, false);
    take(L.w_down, dim * hid, hid, false);
  }
  if (c.tied_embeddings) w.output = w.tok_embd;

  // Chunks of 1 Mi elements pulled by all threads.
  struct Chunk {
    const Fill* f;
    std::size_t begin, end;
  };
  std::vector<Chunk> chunks;
  constexpr std::size_t kChunk = 1 << 20;
  for (const auto& f : fills) {
    for (std::size_t b = 0; b < f.dst.size(); b += kChunk) chunks.push_back({&f, b, std::min(f.dst.size(), b + kChunk)});
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < chunks.size();) {
      const Chunk& ch = chunks[i];
      for (std::size_t k = ch.begin; k < ch.end; ++k) ch.f->dst[k] = synthetic_value(ch.f->draw, static_cast<std::int64_t>(k));
    }
  };
  const unsigned n_threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), static_cast<unsigned>(chunks.size())));
  {
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < n_threads; ++t) pool.emplace_back(worker);
    worker();
  }

  if (c.vocab_size >= 259) m.tokenizer = make_byte_tokenizer(c.vocab_size);  // else no room for 256 bytes
  m.source.format = "preset";
  m.source.preset = c.name;
  m.source.seed = seed;
  return m;
}

}  // namespace atlas::engine
