#include "engine/model_config.hpp"

#include <algorithm>

namespace atlas::engine {

bool ModelConfig::is_dense() const {
  return std::all_of(blocks.begin(), blocks.end(), [](const BlockKind& b) { return b == BlockKind{}; });
}

namespace {

struct Counts {
  long long total = 0, active = 0;
};

Counts block_params(const ModelConfig& c, BlockKind k) {
  const long long d = c.dim, q = c.q_dim(), kv = c.kv_dim();
  Counts n;
  n.total = 2 * d;  // the two block norms
  switch (k.mixer) {
    case MixerKind::attention:
      n.total += q * d + 2 * kv * d + d * q + (c.qk_norm ? 2LL * c.head_dim : 0);
      break;
    case MixerKind::gated_attention:
      n.total += 2 * q * d + 2 * kv * d + d * q + 2LL * c.head_dim;
      break;
    case MixerKind::gated_deltanet:
      n.total += static_cast<long long>(c.gdn_qkvz_dim()) * d + 2LL * c.gdn_v_heads * d +
                 static_cast<long long>(c.gdn_conv_dim()) * c.gdn_conv_kernel + 2LL * c.gdn_v_heads + c.gdn_v_head_dim +
                 d * c.gdn_value_dim();
      break;
  }
  n.active = n.total;
  switch (k.ffn) {
    case FfnKind::swiglu: {
      const long long f = 3LL * c.hidden_dim * d;
      n.total += f;
      n.active += f;
      break;
    }
    case FfnKind::moe: {
      const long long expert = 3LL * c.expert_hidden_dim * d;
      const long long shared = c.shared_expert_hidden_dim > 0 ? 3LL * c.shared_expert_hidden_dim * d + d : 0;
      n.total += c.n_experts * d + c.n_experts * expert + shared;
      n.active += c.n_experts * d + c.n_experts_used * expert + shared;
      break;
    }
  }
  return n;
}

Counts model_params(const ModelConfig& c) {
  const long long embedding = static_cast<long long>(c.vocab_size) * c.dim;
  Counts n;
  n.total = embedding + c.dim + (c.tied_embeddings ? 0 : embedding);
  n.active = n.total;
  for (int l = 0; l < c.n_layers; ++l) {
    const Counts b = block_params(c, c.block(l));
    n.total += b.total;
    n.active += b.active;
  }
  return n;
}

}  // namespace

long long ModelConfig::parameter_count() const { return model_params(*this).total; }
long long ModelConfig::active_parameter_count() const { return model_params(*this).active; }

const char* to_string(Arch a) {
  switch (a) {
    case Arch::llama: return "llama";
    case Arch::qwen3: return "qwen3";
    case Arch::qwen3_next: return "qwen3next";
  }
  return "unknown";
}

const char* to_string(RopeLayout r) {
  switch (r) {
    case RopeLayout::interleaved: return "interleaved";
    case RopeLayout::half: return "half";
  }
  return "unknown";
}

const char* to_string(MixerKind k) {
  switch (k) {
    case MixerKind::attention: return "attention";
    case MixerKind::gated_attention: return "gated_attention";
    case MixerKind::gated_deltanet: return "gated_deltanet";
  }
  return "unknown";
}

const char* to_string(FfnKind k) {
  switch (k) {
    case FfnKind::swiglu: return "swiglu";
    case FfnKind::moe: return "moe";
  }
  return "unknown";
}

std::vector<BlockKind> qwen3_next_blocks(int n_layers, int full_attention_interval) {
  std::vector<BlockKind> out;
  for (int i = 0; i < n_layers; ++i) {
    const bool full = full_attention_interval > 0 && (i + 1) % full_attention_interval == 0;
    out.push_back({full ? MixerKind::gated_attention : MixerKind::gated_deltanet, FfnKind::moe});
  }
  return out;
}

}  // namespace atlas::engine
