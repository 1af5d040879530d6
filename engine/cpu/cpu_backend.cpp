#include "engine/cpu/cpu_backend.hpp"

#include <algorithm>
#include <string>

#include "engine/cpu/matmul.hpp"
#include "engine/cpu/ops.hpp"
#include "engine/error.hpp"

namespace atlas::engine::cpu {

namespace {

// Tokens per internal prefill chunk: bounds the activation buffers for long prompts.
constexpr int kChunk = 256;
// Attention work (query heads x positions x head_dim) below which it stays on one thread.
constexpr long long kParallelAttention = 1 << 15;

void check_size(const ModelConfig& c, const std::string& tensor, std::span<const float> w, long long expected) {
  if (static_cast<long long>(w.size()) != expected) {
    throw EngineError("model '" + c.name + "': weight " + tensor + " has " + std::to_string(w.size()) + " values, expected " +
                      std::to_string(expected));
  }
}

void check_weights(const Model& m) {
  const ModelConfig& c = m.config;
  if (c.dim <= 0 || c.hidden_dim <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 || c.head_dim <= 0 ||
      c.vocab_size <= 0 || c.head_dim % 2 != 0 || c.n_heads % c.n_kv_heads != 0) {
    throw EngineError("model '" + c.name + "': invalid config (dim " + std::to_string(c.dim) + ", hidden_dim " +
                      std::to_string(c.hidden_dim) + ", n_layers " + std::to_string(c.n_layers) + ", n_heads " +
                      std::to_string(c.n_heads) + ", n_kv_heads " + std::to_string(c.n_kv_heads) + ", head_dim " +
                      std::to_string(c.head_dim) + ", vocab_size " + std::to_string(c.vocab_size) + ")");
  }
  const long long d = c.dim, h = c.hidden_dim, q = c.q_dim(), kv = c.kv_dim(), v = c.vocab_size;
  check_size(c, "token_embd", m.weights.tok_embd, v * d);
  check_size(c, "output_norm", m.weights.output_norm, d);
  check_size(c, "output", m.weights.output, v * d);
  if (m.weights.layers.size() != static_cast<std::size_t>(c.n_layers)) {
    throw EngineError("model '" + c.name + "': " + std::to_string(m.weights.layers.size()) + " layers of weights, expected " +
                      std::to_string(c.n_layers));
  }
  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& w = m.weights.layers[static_cast<std::size_t>(l)];
    const std::string blk = "blk." + std::to_string(l) + ".";
    check_size(c, blk + "attn_norm", w.attn_norm, d);
    check_size(c, blk + "attn_q", w.wq, q * d);
    check_size(c, blk + "attn_k", w.wk, kv * d);
    check_size(c, blk + "attn_v", w.wv, kv * d);
    check_size(c, blk + "attn_output", w.wo, d * q);
    check_size(c, blk + "ffn_norm", w.ffn_norm, d);
    check_size(c, blk + "ffn_gate", w.w_gate, h * d);
    check_size(c, blk + "ffn_up", w.w_up, h * d);
    check_size(c, blk + "ffn_down", w.w_down, d * h);
    if (c.qk_norm) {
      check_size(c, blk + "attn_q_norm", w.q_norm, c.head_dim);
      check_size(c, blk + "attn_k_norm", w.k_norm, c.head_dim);
    }
  }
}

std::size_t sz(long long v) { return static_cast<std::size_t>(v); }

}  // namespace

CpuBackend::CpuBackend(const Model& model, const BackendOptions& opts)
    : model_(&model), c_(model.config), max_seq_len_(opts.max_seq_len > 0 ? opts.max_seq_len : model.config.max_seq_len),
      pool_(opts.threads) {
  check_weights(model);
  if (max_seq_len_ <= 0) {
    throw EngineError("model '" + c_.name + "': max_seq_len = " + std::to_string(max_seq_len_) + " is invalid (must be > 0)");
  }
  const long long kv = static_cast<long long>(c_.n_layers) * max_seq_len_ * c_.kv_dim();
  key_cache_.assign(sz(kv), 0.0f);
  value_cache_.assign(sz(kv), 0.0f);
  const int chunk = std::min(kChunk, max_seq_len_);
  x_.resize(sz(1LL * chunk * c_.dim));
  xb_.resize(x_.size());
  q_.resize(sz(1LL * chunk * c_.q_dim()));
  att_.resize(q_.size());
  hb_.resize(sz(1LL * chunk * c_.hidden_dim));
  hb2_.resize(hb_.size());
  rope_cos_.resize(sz(1LL * chunk * c_.head_dim / 2));
  rope_sin_.resize(rope_cos_.size());
  scores_.resize(sz(1LL * pool_.size() * max_seq_len_));
  logits_.resize(sz(c_.vocab_size));
}

float* CpuBackend::key_cache(int layer, int pos) {
  return key_cache_.data() + (static_cast<long long>(layer) * max_seq_len_ + pos) * c_.kv_dim();
}
float* CpuBackend::value_cache(int layer, int pos) {
  return value_cache_.data() + (static_cast<long long>(layer) * max_seq_len_ + pos) * c_.kv_dim();
}

std::span<const float> CpuBackend::forward(std::span<const int> tokens, int pos) {
  const long long n = static_cast<long long>(tokens.size());
  if (n == 0) throw EngineError("cpu backend: forward() called with no tokens");
  if (pos < 0 || pos + n > max_seq_len_) {
    throw EngineError("cpu backend: positions [" + std::to_string(pos) + ", " + std::to_string(pos + n) +
                      ") exceed the context of " + std::to_string(max_seq_len_) + " tokens (max_seq_len)");
  }
  for (int id : tokens) {
    if (id < 0 || id >= c_.vocab_size) {
      throw EngineError("cpu backend: token id " + std::to_string(id) + " is outside the vocabulary of " +
                        std::to_string(c_.vocab_size));
    }
  }
  for (long long at = 0; at < n; at += kChunk) {
    const long long len = std::min<long long>(kChunk, n - at);
    forward_chunk(tokens.subspan(sz(at), sz(len)), pos + static_cast<int>(at), at + len == n);
  }
  return logits_;
}

int CpuBackend::forward_sample(std::span<const int> tokens, int pos, Sampler& sampler) {
  const auto logits = forward(tokens, pos);
  auto s = timer_.scope(Stage::sample);
  return sampler.sample(logits);
}

void CpuBackend::attention_block(int layer, int n, int pos) {
  const int hd = c_.head_dim, kv_dim = c_.kv_dim(), q_dim = c_.q_dim();
  const int group = c_.n_heads / c_.n_kv_heads;  // query heads per KV head (GQA)
  const float* k0 = key_cache(layer, 0);
  const float* v0 = value_cache(layer, 0);
  auto run = [&](int worker, int begin, int end) {
    float* scores = scores_.data() + static_cast<long long>(worker) * max_seq_len_;
    for (int task = begin; task < end; ++task) {
      const int t = task / c_.n_heads, h = task % c_.n_heads;
      const int kv_head = h / group;
      attention(att_.data() + static_cast<long long>(t) * q_dim + h * hd, q_.data() + static_cast<long long>(t) * q_dim + h * hd,
                k0 + kv_head * hd, v0 + kv_head * hd, pos + t + 1, hd, kv_dim, scores);
    }
  };
  const int tasks = n * c_.n_heads;
  if (static_cast<long long>(tasks) * (pos + n) * hd < kParallelAttention || pool_.size() == 1) {
    run(0, 0, tasks);
  } else {
    pool_.parallel_for(tasks, run);
  }
}

void CpuBackend::forward_chunk(std::span<const int> tokens, int pos, bool last) {
  const ModelWeights& w = model_->weights;
  const int n = static_cast<int>(tokens.size());
  const int dim = c_.dim, hd = c_.head_dim, q_dim = c_.q_dim(), kv_dim = c_.kv_dim(), hidden = c_.hidden_dim;
  float* x = x_.data();
  float* xb = xb_.data();

  {
    auto s = timer_.scope(Stage::embed);
    for (int t = 0; t < n; ++t) {
      const float* row = w.tok_embd.data() + static_cast<long long>(tokens[sz(t)]) * dim;
      std::copy(row, row + dim, x + static_cast<long long>(t) * dim);
    }
  }
  {
    auto s = timer_.scope(Stage::rope);
    for (int t = 0; t < n; ++t) {
      rope_angles(rope_cos_.data() + static_cast<long long>(t) * hd / 2, rope_sin_.data() + static_cast<long long>(t) * hd / 2,
                  pos + t, hd, c_.rope_theta);
    }
  }

  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& lw = w.layers[sz(l)];
    float* k = key_cache(l, pos);
    float* v = value_cache(l, pos);
    {
      auto s = timer_.scope(Stage::attn_norm);
      for (int t = 0; t < n; ++t) rmsnorm(xb + t * dim, x + t * dim, lw.attn_norm.data(), dim, c_.rms_eps);
    }
    {
      auto s = timer_.scope(Stage::qkv);
      matmul_fused(pool_, xb, n, dim, {{q_.data(), lw.wq.data(), q_dim}, {k, lw.wk.data(), kv_dim}, {v, lw.wv.data(), kv_dim}});
      if (c_.qk_norm) {  // Qwen3: RMSNorm of each q and k head, before RoPE
        for (int i = 0; i < n * c_.n_heads; ++i) rmsnorm(q_.data() + i * hd, q_.data() + i * hd, lw.q_norm.data(), hd, c_.rms_eps);
        for (int i = 0; i < n * c_.n_kv_heads; ++i) rmsnorm(k + i * hd, k + i * hd, lw.k_norm.data(), hd, c_.rms_eps);
      }
    }
    {
      auto s = timer_.scope(Stage::rope);
      for (int t = 0; t < n; ++t) {
        const float* cs = rope_cos_.data() + static_cast<long long>(t) * hd / 2;
        const float* sn = rope_sin_.data() + static_cast<long long>(t) * hd / 2;
        for (int h = 0; h < c_.n_heads; ++h) rope_apply(q_.data() + t * q_dim + h * hd, cs, sn, hd, c_.rope_layout);
        for (int h = 0; h < c_.n_kv_heads; ++h) rope_apply(k + t * kv_dim + h * hd, cs, sn, hd, c_.rope_layout);
      }
    }
    {
      auto s = timer_.scope(Stage::attention);
      attention_block(l, n, pos);
    }
    {
      auto s = timer_.scope(Stage::o_proj);
      matmul(pool_, xb, att_.data(), lw.wo.data(), n, q_dim, dim);
      add(x, xb, n * dim);
    }
    {
      auto s = timer_.scope(Stage::ffn_norm);
      for (int t = 0; t < n; ++t) rmsnorm(xb + t * dim, x + t * dim, lw.ffn_norm.data(), dim, c_.rms_eps);
    }
    {
      auto s = timer_.scope(Stage::ffn_gate_up);
      matmul_fused(pool_, xb, n, dim, {{hb_.data(), lw.w_gate.data(), hidden}, {hb2_.data(), lw.w_up.data(), hidden}});
      swiglu(hb_.data(), hb2_.data(), n * hidden);
    }
    {
      auto s = timer_.scope(Stage::ffn_down);
      matmul(pool_, xb, hb_.data(), lw.w_down.data(), n, hidden, dim);
      add(x, xb, n * dim);
    }
  }

  if (!last) return;  // only the last position's logits are returned
  const float* x_last = x + static_cast<long long>(n - 1) * dim;
  {
    auto s = timer_.scope(Stage::final_norm);
    rmsnorm(xb, x_last, w.output_norm.data(), dim, c_.rms_eps);
  }
  {
    auto s = timer_.scope(Stage::lm_head);
    matmul(pool_, logits_.data(), xb, w.output.data(), 1, dim, c_.vocab_size);
  }
}

}  // namespace atlas::engine::cpu
