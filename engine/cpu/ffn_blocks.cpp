// swiglu (dense SwiGLU MLP) and moe (Qwen3-Next sparse MoE: HF Qwen3NextSparseMoeBlock) ffns.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/cpu/blocks.hpp"
#include "engine/cpu/matmul.hpp"
#include "engine/cpu/ops.hpp"
#include "engine/routing_fingerprint.hpp"

namespace atlas::engine::cpu {

namespace {

// Multiply-adds of one expert (gate + up + down for its tokens) below which the experts, not
// their rows, are split across threads (decode: top-k experts of one token each).
constexpr long long kMoeRowSplitMacs = 1LL << 22;

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
  std::optional<std::uint64_t> routing_hash() const override { return routing_hash_; }
  void reset_routing_hash() override { routing_hash_ = 0; }
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
      // Rows in token order, ids in choice order: the rule the CUDA router kernels follow too.
      routing_hash_ = fold_expert_ids(routing_hash_, chosen);
    }
    {
      auto s = ctx.timer.scope(Stage::moe_experts);
      std::fill(y, y + nd, 0.0f);
      // Expert by expert (ascending id, as HF's loop): gather the tokens routed to it, run its
      // SwiGLU as one batched matmul, scatter-add the weighted rows.
      struct Active {
        int expert;
        std::size_t first;  // rows [first, first + tokens.size()) of the output buffer
        std::vector<int> tokens;
        std::vector<float> wts;
      };
      std::vector<Active> active;
      std::size_t rows = 0, max_m = 0;
      for (int e = 0; e < E; ++e) {
        Active a{e, rows, {}, {}};
        for (std::size_t i = 0; i < chosen.size(); ++i) {
          if (chosen[i] == e) {
            a.tokens.push_back(static_cast<int>(i / static_cast<std::size_t>(K)));
            a.wts.push_back(weight[i]);
          }
        }
        if (a.tokens.empty()) continue;
        rows += a.tokens.size();
        max_m = std::max(max_m, a.tokens.size());
        active.push_back(std::move(a));
      }
      const std::size_t sd = static_cast<std::size_t>(dim), se = static_cast<std::size_t>(eh);
      float* xs_all = ctx.ws.get(Workspace::moe_x, rows * sd);  // per routed row: its input, then the expert's output
      // Few tokens per expert (decode): one expert's matmuls are too small to split by rows (the
      // workers would wake for microseconds of work), so the experts themselves go to the workers,
      // each with its own scratch and single-threaded matmuls. Many tokens (prefill): experts in
      // turn, each matmul split by rows. Either way every row's arithmetic is the same and the
      // scatter-add below runs in expert order: results do not depend on the thread count.
      const bool by_expert = ctx.pool.size() > 1 && active.size() > 1 && 3LL * static_cast<long long>(max_m) * eh * dim < kMoeRowSplitMacs;
      const int workers = by_expert ? ctx.pool.size() : 1;
      float* h_all = ctx.ws.get(Workspace::moe_h, static_cast<std::size_t>(workers) * max_m * se);
      float* h2_all = ctx.ws.get(Workspace::moe_h2, static_cast<std::size_t>(workers) * max_m * se);
      auto run_expert = [&](const Active& a, int worker, bool split_rows) {
        const int m = static_cast<int>(a.tokens.size());
        float* xs = xs_all + a.first * sd;
        float* h = h_all + static_cast<std::size_t>(worker) * max_m * se;
        float* h2 = h2_all + static_cast<std::size_t>(worker) * max_m * se;
        for (int i = 0; i < m; ++i) {
          const float* src = xb + static_cast<long>(a.tokens[static_cast<std::size_t>(i)]) * dim;
          std::copy(src, src + dim, xs + static_cast<long>(i) * dim);
        }
        const std::size_t ei = static_cast<std::size_t>(a.expert);
        if (split_rows) {
          matmul_fused(ctx.pool, xs, m, dim, {{h, w_.gate_exps[ei], eh}, {h2, w_.up_exps[ei], eh}});
          swiglu(h, h2, m * eh);
          matmul(ctx.pool, xs, h, w_.down_exps[ei], m, eh, dim);  // xs reused as the output
        } else {
          matmul_serial(h, xs, w_.gate_exps[ei], m, dim, eh);
          matmul_serial(h2, xs, w_.up_exps[ei], m, dim, eh);
          swiglu(h, h2, m * eh);
          matmul_serial(xs, h, w_.down_exps[ei], m, eh, dim);
        }
      };
      if (by_expert) {
        ctx.pool.parallel_for(static_cast<int>(active.size()), [&](int worker, int b, int e) {
          for (int i = b; i < e; ++i) run_expert(active[static_cast<std::size_t>(i)], worker, false);
        });
      } else {
        for (const auto& a : active) run_expert(a, 0, true);
      }
      for (const auto& a : active) {
        for (std::size_t i = 0; i < a.tokens.size(); ++i) {
          float* dst = y + static_cast<long>(a.tokens[i]) * dim;
          const float* src = xs_all + (a.first + i) * sd;
          const float wi = a.wts[i];
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
  std::uint64_t routing_hash_ = 0;
};

}  // namespace

std::unique_ptr<Ffn> make_swiglu_ffn(const Model& m, int layer) {
  return std::make_unique<SwigluFfn>(m.config, m.weights.layers[static_cast<std::size_t>(layer)]);
}

std::unique_ptr<Ffn> make_moe_ffn(const Model& m, int layer) {
  return std::make_unique<MoeFfn>(m.config, m.weights.layers[static_cast<std::size_t>(layer)]);
}

}  // namespace atlas::engine::cpu
