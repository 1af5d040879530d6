#pragma once
// The blocks of the CPU backend: one Mixer and one Ffn per layer, chosen by
// ModelConfig::block(l). Each kind owns its weights (spans into the Model), its per-sequence
// state (KV cache for the attention kinds; conv + recurrent state for gated_deltanet), and
// names the stages it reports to the StageTimer.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/cpu/thread_pool.hpp"
#include "engine/model.hpp"
#include "engine/stage.hpp"

namespace atlas::engine::cpu {

/// Scratch activations shared by all blocks (one block runs at a time): named buffers that
/// grow to the largest request and are reused.
class Workspace {
 public:
  enum Slot { q, att, gate, hb, hb2, scores, proj, proj2, conv, core, moe_logits, moe_x, moe_h, moe_h2, moe_y, count_ };
  float* get(Slot s, std::size_t n) {
    auto& v = bufs_[static_cast<std::size_t>(s)];
    if (v.size() < n) v.resize(n);
    return v.data();
  }
 private:
  std::vector<float> bufs_[count_];
};

/// What a block needs besides its weights for one chunk of tokens at positions [pos, pos + n).
struct BlockContext {
  ThreadPool& pool;
  StageTimer& timer;
  Workspace& ws;
  const ModelConfig& config;
  int n = 0;
  int pos = 0;
  const float* rope_cos = nullptr;  ///< [n][rot_dim / 2]
  const float* rope_sin = nullptr;
};

/// A token mixer. forward(): xb [n][dim] holds the normed input and receives the mixer's output
/// (the caller adds it to the residual stream).
class Mixer {
 public:
  virtual ~Mixer() = default;
  virtual void forward(const BlockContext& ctx, float* xb) = 0;
  virtual MixerKind kind() const = 0;
  /// The stages forward() reports.
  virtual std::vector<Stage> stages() const = 0;
  /// Recurrent state that cannot be recomputed from a KV cache prefix (empty for attention):
  /// Session keeps copies of it to resume a sequence (prefix reuse on hybrid models).
  virtual std::span<float> recurrent_state() { return {}; }
};

class Ffn {
 public:
  virtual ~Ffn() = default;
  /// xb [n][dim]: the normed input in, the ffn's output out.
  virtual void forward(const BlockContext& ctx, float* xb) = 0;
  virtual FfnKind kind() const = 0;
  virtual std::vector<Stage> stages() const = 0;
  /// A moe ffn's running routing hash since the last reset (engine/routing_fingerprint.hpp);
  /// nothing for an ffn that routes nothing.
  virtual std::optional<std::uint64_t> routing_hash() const { return std::nullopt; }
  virtual void reset_routing_hash() {}
};

/// Creates layer `l`'s mixer and ffn for `model` (weights checked by the caller), with a KV
/// cache / state for `max_seq_len` positions and `threads` workers: the kind
/// ModelConfig::block(l) names, through its maker below (block_factory.cpp).
std::unique_ptr<Mixer> make_mixer(const Model& model, int layer, int max_seq_len, int threads);
std::unique_ptr<Ffn> make_ffn(const Model& model, int layer);

/// Each kind's maker, in the kind's own file: attention and gated_attention
/// (attention_mixer.cpp), gated_deltanet (deltanet_mixer.cpp), swiglu and moe (ffn_blocks.cpp).
std::unique_ptr<Mixer> make_attention_mixer(const Model& m, int layer, int max_seq_len, bool gated);
std::unique_ptr<Mixer> make_deltanet_mixer(const Model& m, int layer);
std::unique_ptr<Ffn> make_swiglu_ffn(const Model& m, int layer);
std::unique_ptr<Ffn> make_moe_ffn(const Model& m, int layer);

}  // namespace atlas::engine::cpu
