#include "engine/cpu/cpu_backend.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>

#include <unistd.h>

#include "common/available_memory.hpp"
#include "engine/cpu/matmul.hpp"
#include "engine/cpu/ops.hpp"
#include "engine/error.hpp"
#include "engine/routing_fingerprint.hpp"

namespace atlas::engine::cpu {

namespace {

// Tokens per internal prefill chunk: bounds the activation buffers for long prompts.
constexpr int kChunk = 256;

void check_size(const ModelConfig& c, const std::string& tensor, const Weight& w, long long expected) {
  if (static_cast<long long>(w.size()) != expected) {
    throw EngineError("model '" + c.name + "': weight " + tensor + " has " + std::to_string(w.size()) + " values, expected " +
                      std::to_string(expected));
  }
}

void check_weights(const Model& m) {
  const ModelConfig& c = m.config;
  if (c.dim <= 0 || c.n_layers <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 || c.head_dim <= 0 || c.vocab_size <= 0 ||
      c.head_dim % 2 != 0 || c.n_heads % c.n_kv_heads != 0 || c.rot_dim() % 2 != 0 || c.rot_dim() > c.head_dim ||
      (!c.blocks.empty() && c.blocks.size() != static_cast<std::size_t>(c.n_layers))) {
    throw EngineError("model '" + c.name + "': invalid config (dim " + std::to_string(c.dim) + ", hidden_dim " +
                      std::to_string(c.hidden_dim) + ", n_layers " + std::to_string(c.n_layers) + ", n_heads " +
                      std::to_string(c.n_heads) + ", n_kv_heads " + std::to_string(c.n_kv_heads) + ", head_dim " +
                      std::to_string(c.head_dim) + ", rope_dim " + std::to_string(c.rope_dim) + ", vocab_size " +
                      std::to_string(c.vocab_size) + ", " + std::to_string(c.blocks.size()) + " block kinds)");
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
    const BlockKind kind = c.block(l);
    check_size(c, blk + "attn_norm", w.attn_norm, d);
    check_size(c, blk + "ffn_norm", w.ffn_norm, d);
    if (kind.mixer == MixerKind::gated_deltanet) {
      if (c.gdn_k_heads <= 0 || c.gdn_v_heads <= 0 || c.gdn_v_heads % c.gdn_k_heads != 0 || c.gdn_k_head_dim <= 0 ||
          c.gdn_v_head_dim <= 0 || c.gdn_conv_kernel <= 0)
        throw EngineError("model '" + c.name + "': invalid gated_deltanet config (key heads " + std::to_string(c.gdn_k_heads) +
                          ", value heads " + std::to_string(c.gdn_v_heads) + ", conv kernel " + std::to_string(c.gdn_conv_kernel) + ")");
      const long long vh = c.gdn_v_heads;
      check_size(c, blk + "ssm_in", w.gdn.in_qkvz, c.gdn_qkvz_dim() * d);
      check_size(c, blk + "ssm_ba", w.gdn.in_ba, 2 * vh * d);
      check_size(c, blk + "ssm_conv1d", w.gdn.conv1d, 1LL * c.gdn_conv_dim() * c.gdn_conv_kernel);
      check_size(c, blk + "ssm_dt.bias", w.gdn.dt_bias, vh);
      check_size(c, blk + "ssm_a", w.gdn.a, vh);
      check_size(c, blk + "ssm_norm", w.gdn.norm, c.gdn_v_head_dim);
      check_size(c, blk + "ssm_out", w.gdn.out, d * c.gdn_value_dim());
    } else {
      const bool gated = kind.mixer == MixerKind::gated_attention;
      check_size(c, blk + "attn_q", w.wq, (gated ? 2 : 1) * q * d);
      check_size(c, blk + "attn_k", w.wk, kv * d);
      check_size(c, blk + "attn_v", w.wv, kv * d);
      check_size(c, blk + "attn_output", w.wo, d * q);
      if (c.qk_norm || gated) {
        check_size(c, blk + "attn_q_norm", w.q_norm, c.head_dim);
        check_size(c, blk + "attn_k_norm", w.k_norm, c.head_dim);
      }
    }
    if (kind.ffn == FfnKind::swiglu) {
      check_size(c, blk + "ffn_gate", w.w_gate, h * d);
      check_size(c, blk + "ffn_up", w.w_up, h * d);
      check_size(c, blk + "ffn_down", w.w_down, d * h);
    } else {
      const long long e = c.n_experts, eh = c.expert_hidden_dim, sh = c.shared_expert_hidden_dim;
      if (e <= 0 || c.n_experts_used <= 0 || c.n_experts_used > e || eh <= 0 || sh < 0)
        throw EngineError("model '" + c.name + "': invalid moe config (experts " + std::to_string(e) + ", used " +
                          std::to_string(c.n_experts_used) + ", expert hidden " + std::to_string(eh) + ")");
      check_size(c, blk + "ffn_gate_inp", w.moe.router, e * d);
      for (const auto* list : {&w.moe.gate_exps, &w.moe.up_exps, &w.moe.down_exps}) {
        const std::string name = blk + (list == &w.moe.gate_exps ? "ffn_gate_exps" : list == &w.moe.up_exps ? "ffn_up_exps" : "ffn_down_exps");
        if (static_cast<long long>(list->size()) != e)
          throw EngineError("model '" + c.name + "': weight " + name + " has " + std::to_string(list->size()) + " experts, expected " + std::to_string(e));
        for (std::size_t x = 0; x < list->size(); ++x) check_size(c, name + "[" + std::to_string(x) + "]", (*list)[x], eh * d);
      }
      if (sh > 0) {
        check_size(c, blk + "ffn_gate_inp_shexp", w.moe.shared_gate, d);
        check_size(c, blk + "ffn_gate_shexp", w.moe.gate_shexp, sh * d);
        check_size(c, blk + "ffn_up_shexp", w.moe.up_shexp, sh * d);
        check_size(c, blk + "ffn_down_shexp", w.moe.down_shexp, d * sh);
      }
    }
  }
}

std::size_t sz(long long v) { return static_cast<std::size_t>(v); }

/// float32 keys and values of every attention layer for `positions` positions.
double kv_cache_bytes(const ModelConfig& c, int positions) {
  double layers = 0;
  for (int l = 0; l < c.n_layers; ++l) layers += c.block(l).mixer == MixerKind::gated_deltanet ? 0 : 1;
  return layers * positions * static_cast<double>(c.kv_dim()) * 2.0 * sizeof(float);
}

std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", bytes / (1024.0 * 1024.0 * 1024.0));
  return b;
}

}  // namespace

CpuBackend::CpuBackend(const Model& model, const BackendOptions& opts)
    : model_(&model), c_(model.config), max_seq_len_(opts.max_seq_len > 0 ? opts.max_seq_len : model.config.max_seq_len),
      pool_(opts.threads) {
  check_weights(model);
  if (max_seq_len_ <= 0) {
    throw EngineError("model '" + c_.name + "': max_seq_len = " + std::to_string(max_seq_len_) + " is invalid (must be > 0)");
  }
  // The KV cache is allocated for max_seq_len positions up front, and max_seq_len comes from the
  // model file (context_length, max_position_embeddings, llama2.c seq_len) unless the caller
  // chose one: a 12 MB checkpoint claiming 2^22 positions asked for tens of GiB (bad_alloc, or the
  // OOM killer). Refuse what the machine cannot hold, naming the field and the way out.
  const auto kv_bytes = kv_cache_bytes(c_, max_seq_len_);
  // Checked against the memory available now (MemAvailable, the cgroup's headroom), not the
  // machine's total: the cache is zero-filled at once, so on a shared box a cache that fits the
  // total but not what is free swaps or meets the OOM killer.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const double total = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
  const auto avail = atlas::available_memory_bytes();
  const double mem = avail ? static_cast<double>(*avail) : total;
  auto too_big = [&](const std::string& why) {
    return EngineError("model '" + model.source.path.string() + "': the KV cache for max_seq_len " + std::to_string(max_seq_len_) +
                       (opts.max_seq_len > 0 ? " (asked for)" : " (the model's context length)") + " needs " + gib(kv_bytes) + " GiB" + why +
                       "; pass a smaller --max-seq-len");
  };
  if (mem > 0.0 && kv_bytes > mem) {
    throw too_big(", more than the " + gib(mem) + " GiB of memory available now" + (avail ? " (MemAvailable)" : "") + " of this machine's " +
                  gib(total) + " GiB");
  }
  try {
    for (int l = 0; l < c_.n_layers; ++l) {
      mixers_.push_back(make_mixer(model, l, max_seq_len_, pool_.size()));
      ffns_.push_back(make_ffn(model, l));
      if (!mixers_.back()->recurrent_state().empty()) recurrent_.push_back(mixers_.back().get());
    }
  } catch (const std::bad_alloc&) {
    throw too_big(": allocation failed");
  }
  const int chunk = std::min(kChunk, max_seq_len_);
  x_.resize(sz(1LL * chunk * c_.dim));
  xb_.resize(x_.size());
  rope_cos_.resize(sz(1LL * chunk * c_.rot_dim() / 2));
  rope_sin_.resize(rope_cos_.size());
  logits_.resize(sz(c_.vocab_size));
}

void CpuBackend::resume_state_at(int pos) {
  if (recurrent_.empty()) return;
  switch (checkpoints_.resume_at(pos, "cpu")) {
    case RecurrentCheckpoints::Resume::keep: break;
    case RecurrentCheckpoints::Resume::reset:
      for (Mixer* m : recurrent_) std::fill(m->recurrent_state().begin(), m->recurrent_state().end(), 0.0f);
      break;
    case RecurrentCheckpoints::Resume::restore: {
      const std::vector<std::byte>& saved = checkpoints_.checkpoint(pos);
      std::size_t at = 0;
      for (Mixer* m : recurrent_) {
        auto st = m->recurrent_state();
        std::memcpy(st.data(), saved.data() + at, st.size_bytes());
        at += st.size_bytes();
      }
      break;
    }
  }
  checkpoints_.set_state_tokens(pos);
}

void CpuBackend::save_checkpoint() {
  if (recurrent_.empty() || checkpoints_.state_tokens() == 0) return;
  std::vector<std::byte> copy;
  for (Mixer* m : recurrent_) {
    const auto bytes = std::as_bytes(m->recurrent_state());
    copy.insert(copy.end(), bytes.begin(), bytes.end());
  }
  checkpoints_.save(std::move(copy));
}

std::vector<int> CpuBackend::checkpoints() const { return checkpoints_.positions(); }

std::optional<std::uint64_t> CpuBackend::routing_fingerprint() {
  std::vector<std::uint64_t> layers;
  for (const auto& f : ffns_)
    if (const auto h = f->routing_hash()) layers.push_back(*h);
  if (layers.empty()) return std::nullopt;
  return combine_layer_routing(layers);
}

void CpuBackend::reset_routing_fingerprint() {
  for (const auto& f : ffns_) f->reset_routing_hash();
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
  resume_state_at(pos);
  // Checkpoints past pos belong to the continuation being overwritten (the rest all lie on the
  // current sequence's prefix).
  checkpoints_.drop_after(pos);
  for (long long at = 0; at < n; at += kChunk) {
    const long long len = std::min<long long>(kChunk, n - at);
    forward_chunk(tokens.subspan(sz(at), sz(len)), pos + static_cast<int>(at), at + len == n);
    checkpoints_.set_state_tokens(pos + static_cast<int>(at + len));
    // May throw GenerationCancelled: the chunks run so far hold their K/V and state, the caller
    // (Session) keeps none of them as cached.
    prefill_chunk_done(static_cast<int>(len), at + len < n);
  }
  return logits_;
}

int CpuBackend::forward_sample(std::span<const int> tokens, int pos, Sampler& sampler) {
  const auto logits = forward(tokens, pos);
  auto s = timer_.scope(Stage::sample);
  return sampler.sample(logits);
}

int CpuBackend::forward_sample_logprobs(std::span<const int> tokens, int pos, Sampler& sampler, int top_n, TokenLogprobs& out) {
  const auto logits = forward(tokens, pos);
  auto s = timer_.scope(Stage::sample);
  return sample_with_logprobs(logits, sampler, top_n, out);
}

void CpuBackend::forward_chunk(std::span<const int> tokens, int pos, bool last) {
  const ModelWeights& w = model_->weights;
  const int n = static_cast<int>(tokens.size());
  const int dim = c_.dim, rot = c_.rot_dim();
  float* x = x_.data();
  float* xb = xb_.data();

  {
    auto s = timer_.scope(Stage::embed);
    for (int t = 0; t < n; ++t) {
      w.tok_embd.to_f32(static_cast<std::size_t>(tokens[sz(t)]) * static_cast<std::size_t>(dim), static_cast<std::size_t>(dim),
                        x + static_cast<long long>(t) * dim);
    }
  }
  {
    auto s = timer_.scope(Stage::rope);
    for (int t = 0; t < n; ++t) {
      rope_angles(rope_cos_.data() + static_cast<long long>(t) * rot / 2, rope_sin_.data() + static_cast<long long>(t) * rot / 2,
                  pos + t, rot, c_.rope_theta);
    }
  }

  const BlockContext ctx{pool_, timer_, ws_, c_, n, pos, rope_cos_.data(), rope_sin_.data()};
  for (int l = 0; l < c_.n_layers; ++l) {
    const LayerWeights& lw = w.layers[sz(l)];
    {
      auto s = timer_.scope(Stage::attn_norm);
      for (int t = 0; t < n; ++t) rmsnorm(xb + t * dim, x + t * dim, lw.attn_norm.data(), dim, c_.rms_eps);
    }
    mixers_[sz(l)]->forward(ctx, xb);
    add(x, xb, n * dim);
    {
      auto s = timer_.scope(Stage::ffn_norm);
      for (int t = 0; t < n; ++t) rmsnorm(xb + t * dim, x + t * dim, lw.ffn_norm.data(), dim, c_.rms_eps);
    }
    ffns_[sz(l)]->forward(ctx, xb);
    add(x, xb, n * dim);
  }

  if (!last) return;  // only the last position's logits are returned
  const float* x_last = x + static_cast<long long>(n - 1) * dim;
  {
    auto s = timer_.scope(Stage::final_norm);
    rmsnorm(xb, x_last, w.output_norm.data(), dim, c_.rms_eps);
  }
  {
    auto s = timer_.scope(Stage::lm_head);
    matmul(pool_, logits_.data(), xb, w.output, 1, dim, c_.vocab_size);
  }
}

}  // namespace atlas::engine::cpu
