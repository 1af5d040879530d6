#include "engine/model_config.hpp"

namespace atlas::engine {

long long ModelConfig::parameter_count() const {
  const long long d = dim, h = hidden_dim, q = q_dim(), kv = kv_dim();
  long long per_layer = 2 * d                  // attn_norm, ffn_norm
                        + q * d + 2 * kv * d   // wq, wk, wv
                        + d * q                // wo
                        + 3 * h * d;           // w_gate, w_up, w_down
  if (qk_norm) per_layer += 2LL * head_dim;
  const long long embedding = static_cast<long long>(vocab_size) * d;
  return embedding + n_layers * per_layer + d + (tied_embeddings ? 0 : embedding);
}

const char* to_string(Arch a) {
  switch (a) {
    case Arch::llama: return "llama";
    case Arch::qwen3: return "qwen3";
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

}  // namespace atlas::engine
