// attention (Llama, Qwen3) and gated_attention (Qwen3-Next) mixers: softmax attention over a
// float32 KV cache [max_seq_len][kv_dim] owned by the layer.
#include <cmath>

#include "engine/cpu/blocks.hpp"
#include "engine/cpu/matmul.hpp"
#include "engine/cpu/ops.hpp"

namespace atlas::engine::cpu {

namespace {

// Attention work (query heads x positions x head_dim) below which it stays on one thread.
constexpr long long kParallelAttention = 1 << 15;

class AttentionMixer final : public Mixer {
 public:
  AttentionMixer(const ModelConfig& c, const LayerWeights& w, int max_seq_len, bool gated)
      : c_(c), w_(w), max_seq_len_(max_seq_len), gated_(gated) {
    const auto kv = static_cast<std::size_t>(max_seq_len) * static_cast<std::size_t>(c.kv_dim());
    key_cache_.assign(kv, 0.0f);
    value_cache_.assign(kv, 0.0f);
  }

  MixerKind kind() const override { return gated_ ? MixerKind::gated_attention : MixerKind::attention; }
  std::vector<Stage> stages() const override {
    std::vector<Stage> s = {Stage::qkv, Stage::rope, Stage::attention, Stage::o_proj};
    if (gated_) s.push_back(Stage::attn_gate);
    return s;
  }

  void forward(const BlockContext& ctx, float* xb) override {
    const int n = ctx.n, pos = ctx.pos, dim = c_.dim, hd = c_.head_dim, q_dim = c_.q_dim(), kv_dim = c_.kv_dim();
    const std::size_t nn = static_cast<std::size_t>(n);
    float* q = ctx.ws.get(Workspace::q, nn * static_cast<std::size_t>(q_dim));
    float* att = ctx.ws.get(Workspace::att, nn * static_cast<std::size_t>(q_dim));
    float* k = key_cache(pos);
    float* v = value_cache(pos);
    float* gate = nullptr;
    {
      auto s = ctx.timer.scope(Stage::qkv);
      if (!gated_) {
        matmul_fused(ctx.pool, xb, n, dim, {{q, w_.wq, q_dim}, {k, w_.wk, kv_dim}, {v, w_.wv, kv_dim}});
      } else {
        // q_proj emits [query | gate] per head (HF: view(..., heads, 2 * head_dim).chunk(2)).
        float* qg = ctx.ws.get(Workspace::proj, nn * 2 * static_cast<std::size_t>(q_dim));
        gate = ctx.ws.get(Workspace::gate, nn * static_cast<std::size_t>(q_dim));
        matmul_fused(ctx.pool, xb, n, dim, {{qg, w_.wq, 2 * q_dim}, {k, w_.wk, kv_dim}, {v, w_.wv, kv_dim}});
        for (int t = 0; t < n; ++t) {
          for (int h = 0; h < c_.n_heads; ++h) {
            const float* src = qg + (static_cast<long>(t) * 2 * q_dim + 2L * h * hd);
            std::copy(src, src + hd, q + static_cast<long>(t) * q_dim + h * hd);
            std::copy(src + hd, src + 2 * hd, gate + static_cast<long>(t) * q_dim + h * hd);
          }
        }
      }
      if (c_.qk_norm) {  // Qwen3 / Qwen3-Next: RMSNorm of each q and k head, before RoPE
        for (int i = 0; i < n * c_.n_heads; ++i) rmsnorm(q + i * hd, q + i * hd, w_.q_norm.data(), hd, c_.rms_eps);
        for (int i = 0; i < n * c_.n_kv_heads; ++i) rmsnorm(k + i * hd, k + i * hd, w_.k_norm.data(), hd, c_.rms_eps);
      }
    }
    {
      auto s = ctx.timer.scope(Stage::rope);
      const int rot = c_.rot_dim();  // partial RoPE rotates the first rot dims; the rest pass through
      for (int t = 0; t < n; ++t) {
        const float* cs = ctx.rope_cos + static_cast<long long>(t) * rot / 2;
        const float* sn = ctx.rope_sin + static_cast<long long>(t) * rot / 2;
        for (int h = 0; h < c_.n_heads; ++h) rope_apply(q + t * q_dim + h * hd, cs, sn, rot, c_.rope_layout);
        for (int h = 0; h < c_.n_kv_heads; ++h) rope_apply(k + t * kv_dim + h * hd, cs, sn, rot, c_.rope_layout);
      }
    }
    {
      auto s = ctx.timer.scope(Stage::attention);
      attend(ctx, q, att);
    }
    if (gated_) {
      auto s = ctx.timer.scope(Stage::attn_gate);
      for (long i = 0; i < static_cast<long>(n) * q_dim; ++i) att[i] *= sigmoid(gate[i]);
    }
    {
      auto s = ctx.timer.scope(Stage::o_proj);
      matmul(ctx.pool, xb, att, w_.wo, n, q_dim, dim);
    }
  }

 private:
  float* key_cache(int pos) { return key_cache_.data() + static_cast<long long>(pos) * c_.kv_dim(); }
  float* value_cache(int pos) { return value_cache_.data() + static_cast<long long>(pos) * c_.kv_dim(); }

  void attend(const BlockContext& ctx, const float* q_all, float* att) {
    const int n = ctx.n, pos = ctx.pos, hd = c_.head_dim, kv_dim = c_.kv_dim(), q_dim = c_.q_dim();
    const int group = c_.n_heads / c_.n_kv_heads;  // query heads per KV head (GQA)
    const float* k0 = key_cache_.data();
    const float* v0 = value_cache_.data();
    float* scores_all = ctx.ws.get(Workspace::scores, static_cast<std::size_t>(ctx.pool.size()) * static_cast<std::size_t>(max_seq_len_));
    auto run = [&](int worker, int begin, int end) {
      float* scores = scores_all + static_cast<long long>(worker) * max_seq_len_;
      for (int task = begin; task < end; ++task) {
        const int t = task / c_.n_heads, h = task % c_.n_heads;
        const int kv_head = h / group;
        attention(att + static_cast<long long>(t) * q_dim + h * hd, q_all + static_cast<long long>(t) * q_dim + h * hd, k0 + kv_head * hd,
                  v0 + kv_head * hd, pos + t + 1, hd, kv_dim, scores);
      }
    };
    const int tasks = n * c_.n_heads;
    if (static_cast<long long>(tasks) * (pos + n) * hd < kParallelAttention || ctx.pool.size() == 1) {
      run(0, 0, tasks);
    } else {
      ctx.pool.parallel_for(tasks, run);
    }
  }

  const ModelConfig& c_;
  const LayerWeights& w_;
  int max_seq_len_;
  bool gated_;
  std::vector<float> key_cache_, value_cache_;  ///< [max_seq_len][kv_dim]
};

}  // namespace

std::unique_ptr<Mixer> make_attention_mixer(const Model& m, int layer, int max_seq_len, bool gated) {
  return std::make_unique<AttentionMixer>(m.config, m.weights.layers[static_cast<std::size_t>(layer)], max_seq_len, gated);
}

}  // namespace atlas::engine::cpu
