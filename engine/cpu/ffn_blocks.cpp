// swiglu (dense SwiGLU MLP) and moe (Qwen3-Next sparse MoE: HF Qwen3NextSparseMoeBlock) ffns.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/cpu/blocks.hpp"
#include "engine/cpu/gdn.hpp"
#include "engine/cpu/matmul.hpp"
#include "engine/cpu/ops.hpp"

namespace atlas::engine::cpu {

namespace {

class SwigluFfn final : public Ffn {
 public:
  SwigluFfn(const ModelConfig& c, const LayerWeights& w) : c_(c), w_(w) {}
  FfnKind kind() const override { return FfnKind::swiglu; }
  std::vector<Stage> stages() const override { return {Stage::ffn_gate_up, Stage::ffn_down}; }

  void forward(const BlockContext& ctx, float* xb) override {
    const int n = ctx.n, dim = c_.dim, hidden = c_.hidden_dim;
    const std::size_t size = static_cast<std::size_t>(n) * static_cast<std::size_t>(hidden);
    float* hb = ctx.ws.get(Workspace::hb, size);
    float* hb2 = ctx.ws.get(Workspace::hb2, size);
    {
      auto s = ctx.timer.scope(Stage::ffn_gate_up);
      matmul_fused(ctx.pool, xb, n, dim, {{hb, w_.w_gate, hidden}, {hb2, w_.w_up, hidden}});
      swiglu(hb, hb2, n * hidden);
    }
    {
      auto s = ctx.timer.scope(Stage::ffn_down);
      matmul(ctx.pool, xb, hb, w_.w_down, n, hidden, dim);
    }
  }

 private:
  const ModelConfig& c_;
  const LayerWeights& w_;
};

/// Router: softmax over the experts in fp32, top-k (ties: the lower expert id, as torch.topk on
/// CPU in practice), renormalised to sum 1 when norm_topk_prob. Routed experts are SwiGLU
/// MLPs; the shared expert's output is scaled by sigmoid(shared_gate . x). Output = routed + shared.
class MoeFfn final : public Ffn {
 public:
  MoeFfn(const ModelConfig& c, const LayerWeights& w) : c_(c), w_(w.moe) {}
  FfnKind kind() const override { return FfnKind::moe; }
  std::vector<Stage> stages() const override {
    std::vector<Stage> s = {Stage::moe_router, Stage::moe_experts};
    if (c_.shared_expert_hidden_dim > 0) s.push_back(Stage::moe_shared);
    return s;
  }

  void forward(const BlockContext& ctx, float* xb) override {
    const int n = ctx.n, dim = c_.dim, E = c_.n_experts, K = c_.n_experts_used, eh = c_.expert_hidden_dim;
    const std::size_t nn = static_cast<std::size_t>(n), nd = nn * static_cast<std::size_t>(dim);
    float* logits = ctx.ws.get(Workspace::moe_logits, nn * static_cast<std::size_t>(E));
    float* y = ctx.ws.get(Workspace::moe_y, nd);  // routed + shared, copied to xb at the end
    std::vector<int> chosen(nn * static_cast<std::size_t>(K));
    std::vector<float> weight(chosen.size());
    {
      auto s = ctx.timer.scope(Stage::moe_router);
      matmul(ctx.pool, logits, xb, w_.router, n, dim, E);
      std::vector<int> order(static_cast<std::size_t>(E));
      for (int t = 0; t < n; ++t) {
        float* p = logits + static_cast<long>(t) * E;
        softmax(p, E);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + K, order.end(), [&](int a, int b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
        float sum = 0.0f;
        for (int i = 0; i < K; ++i) sum += p[order[static_cast<std::size_t>(i)]];
        for (int i = 0; i < K; ++i) {
          const std::size_t at = static_cast<std::size_t>(t) * static_cast<std::size_t>(K) + static_cast<std::size_t>(i);
          chosen[at] = order[static_cast<std::size_t>(i)];
          weight[at] = c_.norm_topk_prob ? p[chosen[at]] / sum : p[chosen[at]];
        }
      }
    }
    {
      auto s = ctx.timer.scope(Stage::moe_experts);
      std::fill(y, y + nd, 0.0f);
      // Expert by expert (ascending id, as HF's loop): gather the tokens routed to it, run its
      // SwiGLU as one batched matmul, scatter-add the weighted rows.
      std::vector<int> tokens;
      std::vector<float> wts;
      for (int e = 0; e < E; ++e) {
        tokens.clear();
        wts.clear();
        for (std::size_t i = 0; i < chosen.size(); ++i) {
          if (chosen[i] == e) {
            tokens.push_back(static_cast<int>(i / static_cast<std::size_t>(K)));
            wts.push_back(weight[i]);
          }
        }
        if (tokens.empty()) continue;
        const int m = static_cast<int>(tokens.size());
        const std::size_t ms = static_cast<std::size_t>(m);
        float* xs = ctx.ws.get(Workspace::moe_x, ms * static_cast<std::size_t>(dim));
        float* h = ctx.ws.get(Workspace::moe_h, ms * static_cast<std::size_t>(eh));
        float* h2 = ctx.ws.get(Workspace::moe_h2, ms * static_cast<std::size_t>(eh));
        for (int i = 0; i < m; ++i) std::copy(xb + static_cast<long>(tokens[static_cast<std::size_t>(i)]) * dim,
                                              xb + static_cast<long>(tokens[static_cast<std::size_t>(i)] + 1) * dim, xs + static_cast<long>(i) * dim);
        const std::size_t off = static_cast<std::size_t>(e) * static_cast<std::size_t>(eh) * static_cast<std::size_t>(dim);
        const std::size_t per = static_cast<std::size_t>(eh) * static_cast<std::size_t>(dim);
        matmul_fused(ctx.pool, xs, m, dim, {{h, w_.gate_exps.subspan(off, per), eh}, {h2, w_.up_exps.subspan(off, per), eh}});
        swiglu(h, h2, m * eh);
        matmul(ctx.pool, xs, h, w_.down_exps.subspan(off, per), m, eh, dim);  // xs reused as the output
        for (int i = 0; i < m; ++i) {
          float* dst = y + static_cast<long>(tokens[static_cast<std::size_t>(i)]) * dim;
          const float* src = xs + static_cast<long>(i) * dim;
          const float wi = wts[static_cast<std::size_t>(i)];
          for (int j = 0; j < dim; ++j) dst[j] += src[j] * wi;
        }
      }
    }
    if (c_.shared_expert_hidden_dim > 0) {
      auto s = ctx.timer.scope(Stage::moe_shared);
      const int sh = c_.shared_expert_hidden_dim;
      float* h = ctx.ws.get(Workspace::moe_h, nn * static_cast<std::size_t>(sh));
      float* h2 = ctx.ws.get(Workspace::moe_h2, nn * static_cast<std::size_t>(sh));
      float* out = ctx.ws.get(Workspace::moe_x, nd);
      matmul_fused(ctx.pool, xb, n, dim, {{h, w_.gate_shexp, sh}, {h2, w_.up_shexp, sh}});
      swiglu(h, h2, n * sh);
      matmul(ctx.pool, out, h, w_.down_shexp, n, sh, dim);
      for (int t = 0; t < n; ++t) {
        const float gate = sigmoid(dot(xb + static_cast<long>(t) * dim, w_.shared_gate.data(), dim));
        float* dst = y + static_cast<long>(t) * dim;
        const float* src = out + static_cast<long>(t) * dim;
        for (int j = 0; j < dim; ++j) dst[j] += gate * src[j];
      }
    }
    std::copy(y, y + nd, xb);
  }

 private:
  const ModelConfig& c_;
  const MoeWeights& w_;
};

}  // namespace

std::unique_ptr<Mixer> make_attention_mixer(const Model& m, int layer, int max_seq_len, bool gated);
std::unique_ptr<Mixer> make_deltanet_mixer(const Model& m, int layer);

std::unique_ptr<Mixer> make_mixer(const Model& model, int layer, int max_seq_len, int) {
  switch (model.config.block(layer).mixer) {
    case MixerKind::attention: return make_attention_mixer(model, layer, max_seq_len, false);
    case MixerKind::gated_attention: return make_attention_mixer(model, layer, max_seq_len, true);
    case MixerKind::gated_deltanet: return make_deltanet_mixer(model, layer);
  }
  return nullptr;
}

std::unique_ptr<Ffn> make_ffn(const Model& model, int layer) {
  const LayerWeights& w = model.weights.layers[static_cast<std::size_t>(layer)];
  switch (model.config.block(layer).ffn) {
    case FfnKind::swiglu: return std::make_unique<SwigluFfn>(model.config, w);
    case FfnKind::moe: return std::make_unique<MoeFfn>(model.config, w);
  }
  return nullptr;
}

}  // namespace atlas::engine::cpu
