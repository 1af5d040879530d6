// moe ffn (Qwen3-Next sparse MoE: HF Qwen3NextSparseMoeBlock) on the device. Decode is five
// launches (kernels/moe.hpp), all on the device, whatever the routing: the router GEMV
// (ffn_norm in its prologue; the shared expert's gate is its last row), the normed input in
// the weight type, softmax + top-k, the selected experts' (and the shared expert's) gate/up in
// one launch, their down projections and the weighted combine in one launch.
// The experts of a layer are one allocation, [n_experts][rows][ld], so one launch reaches all.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <vector>
#include <string>

#include "engine/error.hpp"

#include "engine/cuda/blocks/block_util.hpp"
#include "engine/cuda/blocks/device_block.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemv.hpp"
#include "kernels/moe.hpp"

namespace atlas::engine::cuda {

using kernels::ElemType;
using kernels::padded_ld;

namespace {

class MoeBlock final : public DeviceBlock {
 public:
  MoeBlock(const ModelConfig& c, int layer, ElemType wt, bool host_routing)
      : c_(c), layer_(layer), wt_(wt), host_routing_(host_routing) {
    E_ = c.n_experts;
    K_ = c.n_experts_used;
    eh_ = c.expert_hidden_dim;
    sh_ = c.shared_expert_hidden_dim;
    ld_dim_ = padded_ld(c.dim);
    ld_eh_ = padded_ld(eh_);
    ld_sh_ = sh_ > 0 ? padded_ld(sh_) : 0;
    ld_h_ = std::max(ld_eh_, ld_sh_);
    router_rows_ = E_ + (sh_ > 0 ? 1 : 0);
    // Checked at load, not at the first decode inside a capture (kernels/moe.hpp's limits).
    if (E_ <= 0 || K_ < 1 || K_ > 32 || K_ > E_ || eh_ <= 0 || sh_ < 0)
      throw EngineError("cuda backend: layer " + std::to_string(layer) + ": moe with " + std::to_string(E_) + " experts, " +
                        std::to_string(K_) + " per token, expert hidden " + std::to_string(eh_) +
                        ": needs 1 <= experts per token <= min(32, experts)");
  }
  const char* kind() const override { return "moe"; }

  void layout(Arenas& a) override {
    const std::size_t start = a.weights.used();
    ffn_norm_ = take<float>(a.weights, ld_dim_);
    router_ = take(a.weights, wt_, static_cast<std::size_t>(router_rows_) * ld_dim_);
    gate_up_ = take(a.weights, wt_, static_cast<std::size_t>(E_) * 2 * eh_ * ld_dim_);
    down_ = take(a.weights, wt_, static_cast<std::size_t>(E_) * c_.dim * ld_eh_);
    if (sh_ > 0) {
      sh_gate_up_ = take(a.weights, wt_, 2 * static_cast<std::size_t>(sh_) * ld_dim_);
      sh_down_ = take(a.weights, wt_, static_cast<std::size_t>(c_.dim) * ld_sh_);
    }
    weight_bytes_ = a.weights.used() - start;
    logits_ = take<float>(a.workspace, router_rows_);
    xn_ = take(a.workspace, wt_, ld_dim_);
    ids_ = take<int>(a.workspace, K_);
    weights_ = take<float>(a.workspace, K_ + 1);
    hash_ = take<unsigned long long>(a.workspace, 1);
    h_ = take(a.workspace, wt_, static_cast<std::size_t>(K_ + 1) * ld_h_);
    // Host routing's buffers always (a few bytes): the suite switches routing at run time.
    chosen_d_ = take<int>(a.workspace, K_);
    if (!a.workspace.counting() && logits_h_.get() == nullptr) {
      logits_h_ = PinnedBuffer(sizeof(float) * router_rows_);
      chosen_h_ = PinnedBuffer(sizeof(int) * K_);
    }
  }

  void upload(const ModelWeights& mw, Uploader& up) override {
    const LayerWeights& l = mw.layers[static_cast<std::size_t>(layer_)];
    const MoeWeights& m = l.moe;
    const std::string blk = "blk." + std::to_string(layer_) + ".";
    const std::size_t es = kernels::elem_size(wt_);
    up.f32(l.ffn_norm, c_.dim, ffn_norm_, (blk + "ffn_norm").c_str());
    up.rows(m.router, E_, c_.dim, router_, ld_dim_, ld_dim_, (blk + "ffn_gate_inp").c_str());
    if (sh_ > 0)
      up.rows(m.shared_gate, 1, c_.dim, static_cast<char*>(router_) + static_cast<std::size_t>(E_) * ld_dim_ * es, ld_dim_,
              ld_dim_, (blk + "ffn_gate_inp_shexp").c_str());
    if (m.gate_exps.size() != static_cast<std::size_t>(E_) || m.up_exps.size() != m.gate_exps.size() ||
        m.down_exps.size() != m.gate_exps.size())
      throw EngineError("cuda upload: " + blk + "ffn_*_exps has " + std::to_string(m.gate_exps.size()) + " experts, expected " +
                        std::to_string(E_));
    const std::size_t gu_expert = 2 * static_cast<std::size_t>(eh_) * ld_dim_ * es;
    const std::size_t down_expert = static_cast<std::size_t>(c_.dim) * ld_eh_ * es;
    for (int e = 0; e < E_; ++e) {
      const std::size_t i = static_cast<std::size_t>(e);
      char* gu = static_cast<char*>(gate_up_) + i * gu_expert;
      // Appended, not "[" + to_string(e) + "]": gcc 12 -O3 flags that concatenation with a false
      // -Wrestrict, which -Werror under CI turns into a failed build.
      std::string ex = "[";
      ex += std::to_string(e);
      ex += ']';
      up.rows(m.gate_exps[i], eh_, c_.dim, gu, ld_dim_, 2 * ld_dim_, (blk + "ffn_gate_exps" + ex).c_str());
      up.rows(m.up_exps[i], eh_, c_.dim, gu + static_cast<std::size_t>(ld_dim_) * es, ld_dim_, 2 * ld_dim_,
              (blk + "ffn_up_exps" + ex).c_str());
      up.rows(m.down_exps[i], c_.dim, eh_, static_cast<char*>(down_) + i * down_expert, ld_eh_, ld_eh_,
              (blk + "ffn_down_exps" + ex).c_str());
    }
    if (sh_ > 0) {
      char* gu = static_cast<char*>(sh_gate_up_);
      up.rows(m.gate_shexp, sh_, c_.dim, gu, ld_dim_, 2 * ld_dim_, (blk + "ffn_gate_shexp").c_str());
      up.rows(m.up_shexp, sh_, c_.dim, gu + static_cast<std::size_t>(ld_dim_) * es, ld_dim_, 2 * ld_dim_,
              (blk + "ffn_up_shexp").c_str());
      up.rows(m.down_shexp, c_.dim, sh_, sh_down_, ld_sh_, ld_sh_, (blk + "ffn_down_shexp").c_str());
    }
  }

  kernels::MoeArgs args(float* y) const {
    kernels::MoeArgs a;
    a.wtype = wt_;
    a.dim = c_.dim;
    a.ld_in = ld_dim_;
    a.k = K_;
    a.routed = {gate_up_, down_, eh_, ld_eh_};
    if (sh_ > 0) a.shared = {sh_gate_up_, sh_down_, sh_, ld_sh_};
    a.ids = ids_;
    a.weights = weights_;
    a.x = xn_;
    a.h = h_;
    a.ld_h = ld_h_;
    a.y = y;
    return a;
  }

  void decode(StepContext& s) override {
    cudaStream_t st = s.tape.stream();
    s.tape.kernel(Stage::moe_router, [&] {  // ffn_norm in the prologue
      kernels::gemv({wt_, router_, router_rows_, c_.dim, ld_dim_, kernels::GemvInput::rmsnorm, s.x, ffn_norm_, c_.rms_eps,
                     kernels::GemvOutput::store, logits_},
                    st);
    });
    s.tape.kernel(Stage::moe_router, [&] { kernels::rmsnorm_rows(wt_, s.x, ffn_norm_, c_.rms_eps, 1, c_.dim, xn_, ld_dim_, st); });
    if (host_routing_) {
      // The investigation's pattern: the router's logits to the host, a sync, the top-k there,
      // the choice back. The weights are still computed on the device from the same logits, so
      // host and device routing give the same bits whenever they choose the same experts.
      s.tape.copy_d2h(Stage::moe_router, logits_h_.get(), logits_, sizeof(float) * router_rows_);
      s.tape.host_sync(Stage::moe_router);
      host_topk(std::span<const float>(logits_h_.as<float>(), static_cast<std::size_t>(E_)), chosen_h_.as<int>());
      s.tape.copy_h2d(Stage::moe_router, chosen_d_, chosen_h_.get(), sizeof(int) * K_);
    }
    s.tape.kernel(Stage::moe_router, [&] {
      kernels::moe_topk({logits_, E_, K_, c_.norm_topk_prob, sh_ > 0, ids_, weights_, host_routing_ ? chosen_d_ : nullptr, hash_}, st);
    });
    const kernels::MoeArgs a = args(s.x);
    s.tape.kernel(Stage::moe_experts, [&] { kernels::moe_gate_up(a, st); });
    s.tape.kernel(Stage::moe_experts, [&] { kernels::moe_down(a, st); });
  }

  bool has_chunked_prefill() const override { return true; }
  // logits, weights, ids and the host's choice (host routing can be switched on at any time)
  int prefill_f_cols() const override { return router_rows_ + 3 * K_ + 1; }
  int prefill_xb_cols() const override { return ld_dim_ + (K_ + 1) * ld_h_; }  // normed x, expert hidden

  /// A chunk of n tokens: the normed inputs and the router as one GEMM, top-k for every token in
  /// one launch, then each token's selected (and shared) experts as in decode, all tokens in one
  /// launch per stage.
  void prefill(PrefillContext& p) override {
    cudaStream_t st = p.tape.stream();
    const int n = p.n;
    const std::size_t es = kernels::elem_size(wt_);
    float* logits = p.f;                                                       // [n][router_rows]
    float* weights = logits + static_cast<std::size_t>(n) * router_rows_;     // [n][K + 1]
    int* ids = reinterpret_cast<int*>(weights + static_cast<std::size_t>(n) * (K_ + 1));  // [n][K]
    void* xn = p.xb;                                                           // [n][ld_dim]
    void* h = static_cast<char*>(p.xb) + static_cast<std::size_t>(n) * ld_dim_ * es;  // [n][K + 1][ld_h]
    p.tape.work(Stage::ffn_norm, [&] { kernels::rmsnorm_rows(wt_, p.x, ffn_norm_, c_.rms_eps, n, c_.dim, xn, ld_dim_, st); });
    p.tape.work(Stage::moe_router, [&] {
      prefill_gemm(p.cublas, wt_, router_, router_rows_, c_.dim, ld_dim_, xn, ld_dim_, n, logits, router_rows_, false, 0.0f);
    });
    int* chosen = nullptr;
    if (host_routing_) {
      // The chunk's router logits to the host, a sync, each token's top-k there, the choice
      // back: the decode pattern once per chunk, so a host-routed prompt routes exactly as a
      // device-routed one (same logits, same tie rule) and both sides of an A/B compute alike.
      chosen = ids + static_cast<std::size_t>(n) * K_;
      const std::size_t lbytes = sizeof(float) * static_cast<std::size_t>(n) * router_rows_;
      const std::size_t cbytes = sizeof(int) * static_cast<std::size_t>(n) * K_;
      if (prefill_logits_h_.bytes() < lbytes) prefill_logits_h_ = PinnedBuffer(lbytes);
      if (prefill_chosen_h_.bytes() < cbytes) prefill_chosen_h_ = PinnedBuffer(cbytes);
      p.tape.copy_d2h(Stage::moe_router, prefill_logits_h_.get(), logits, lbytes);
      p.tape.host_sync(Stage::moe_router);
      for (int t = 0; t < n; ++t)
        host_topk(std::span<const float>(prefill_logits_h_.as<float>() + static_cast<std::size_t>(t) * router_rows_,
                                         static_cast<std::size_t>(E_)),
                  prefill_chosen_h_.as<int>() + static_cast<std::size_t>(t) * K_);
      p.tape.copy_h2d(Stage::moe_router, chosen, prefill_chosen_h_.get(), cbytes);
    }
    p.tape.work(Stage::moe_router, [&] {
      kernels::MoeTopkArgs t{logits, E_, K_, c_.norm_topk_prob, sh_ > 0, ids, weights, chosen, hash_};
      t.n_rows = n;
      t.logits_ld = router_rows_;
      kernels::moe_topk(t, st);
    });
    kernels::MoeArgs a = args(p.x);
    a.ids = ids;
    a.weights = weights;
    a.x = xn;
    a.h = h;
    a.n_tokens = n;
    a.x_ld = ld_dim_;
    a.y_ld = c_.dim;
    p.tape.work(Stage::moe_experts, [&] {
      // The down GEMVs read every column of h up to ld_hidden: the shared scratch's padding
      // must be zero, not a previous layer's values.
      ATLAS_CUDA_CHECK(cudaMemsetAsync(h, 0, static_cast<std::size_t>(n) * (K_ + 1) * ld_h_ * es, st));
      kernels::moe_gate_up(a, st);
      kernels::moe_down(a, st);
    });
  }

  std::vector<Stage> stages() const override {
    // ffn_norm runs in the router GEMV's prologue; the shared expert inside the experts' launches.
    if (sh_ > 0) return {Stage::ffn_norm, Stage::moe_router, Stage::moe_experts, Stage::moe_shared};
    return {Stage::ffn_norm, Stage::moe_router, Stage::moe_experts};
  }
  std::size_t bytes_per_token(int) const override {
    const std::size_t es = kernels::elem_size(wt_);
    const std::size_t per_expert = (2 * static_cast<std::size_t>(eh_) * ld_dim_ + static_cast<std::size_t>(c_.dim) * ld_eh_) * es;
    const std::size_t shared = (2 * static_cast<std::size_t>(sh_) * ld_dim_ + static_cast<std::size_t>(c_.dim) * ld_sh_) * es;
    return static_cast<std::size_t>(ld_dim_) * router_rows_ * es + ld_dim_ * sizeof(float) + K_ * per_expert + shared;
  }
  std::size_t weight_bytes() const override { return weight_bytes_; }

  const unsigned long long* routing_hash() const override { return hash_; }
  bool set_host_routing(bool on) override {
    host_routing_ = on;
    return true;
  }

  std::optional<std::string> capture_veto() const override {
    if (host_routing_)
      return std::string("moe routing on the host (ATLAS_MOE_HOST_ROUTING=1): a D2H copy of the router logits and a "
                         "stream sync inside the step");
    return std::nullopt;
  }

  /// The K largest logits, the lower expert id on a tie, largest first: the device kernel's
  /// choice (softmax is monotonic, so the largest probabilities are the largest logits).
  void host_topk(std::span<const float> logits, int* out) const {
    std::vector<int> order(logits.size());
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + K_, order.end(), [&](int a, int b) {
      // NaN ranks last (a strict weak order for partial_sort; the kernel never picks it either).
      auto rank = [&](int e) { const float v = logits[static_cast<std::size_t>(e)]; return std::isnan(v) ? -INFINITY : v; };
      const float la = rank(a), lb = rank(b);
      return la > lb || (la == lb && a < b);
    });
    std::copy(order.begin(), order.begin() + K_, out);
  }

 private:
  const ModelConfig& c_;
  int layer_;
  ElemType wt_;
  int E_ = 0, K_ = 0, eh_ = 0, sh_ = 0, ld_dim_ = 0, ld_eh_ = 0, ld_sh_ = 0, ld_h_ = 0, router_rows_ = 0;
  std::size_t weight_bytes_ = 0;
  float* ffn_norm_ = nullptr;  ///< gain, float32
  void *router_ = nullptr, *gate_up_ = nullptr, *down_ = nullptr;
  void *sh_gate_up_ = nullptr, *sh_down_ = nullptr;
  float* logits_ = nullptr;   ///< [n_experts (+ 1)]
  void* xn_ = nullptr;        ///< weight type [ld_dim]: RMSNorm(x) * ffn_norm
  int* ids_ = nullptr;        ///< [k]
  float* weights_ = nullptr;  ///< [k + 1]
  void* h_ = nullptr;         ///< weight type [k + 1][ld_h]
  unsigned long long* hash_ = nullptr;  ///< running hash of the chosen ids (kernels::MoeTopkArgs)
  bool host_routing_ = false;
  int* chosen_d_ = nullptr;   ///< [k] the host's choice (host routing)
  PinnedBuffer logits_h_, chosen_h_;
  PinnedBuffer prefill_logits_h_, prefill_chosen_h_;  ///< host routing of a prefill chunk, grown on demand
};

}  // namespace

std::unique_ptr<DeviceBlock> make_moe_block(const ModelConfig& c, int layer, ElemType wt, bool host_routing) {
  return std::make_unique<MoeBlock>(c, layer, wt, host_routing);
}

}  // namespace atlas::engine::cuda
