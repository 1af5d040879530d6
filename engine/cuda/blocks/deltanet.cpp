// gated_deltanet mixer (Qwen3-Next linear attention; HF Qwen3NextGatedDeltaNet) on the device.
// Decode is four launches (kernels/gdn.hpp): in_proj GEMV (attn_norm in its prologue), conv1d +
// SiLU, the gated delta rule with the gated RMSNorm, out_proj GEMV (residual add fused); a
// prefill chunk is the same stages with GEMMs for the projections.
// Its state, float32 and per sequence: the conv window [conv_dim][kernel - 1] and the
// recurrent state [v_heads][k_head_dim][v_head_dim], one allocation (what a checkpoint copies).
#include <algorithm>
#include <string>
#include <vector>

#include "engine/cuda/blocks/block_util.hpp"
#include "engine/cuda/blocks/device_block.hpp"
#include "engine/error.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gdn.hpp"
#include "kernels/gemv.hpp"

namespace atlas::engine::cuda {

using kernels::ElemType;
using kernels::padded_ld;

namespace {

class DeltaNetBlock final : public DeviceBlock {
 public:
  DeltaNetBlock(const ModelConfig& c, int layer, ElemType wt, bool veto) : c_(c), layer_(layer), wt_(wt), veto_(veto) {
    shape_ = {c.gdn_k_heads, c.gdn_v_heads, c.gdn_k_head_dim, c.gdn_v_head_dim, c.gdn_conv_kernel};
    ld_dim_ = padded_ld(c.dim);
    ld_value_ = padded_ld(shape_.value_dim());
    conv_floats_ = static_cast<std::size_t>(shape_.conv_dim()) * (shape_.conv_kernel - 1);
    ssm_floats_ = static_cast<std::size_t>(shape_.v_heads) * shape_.k_dim * shape_.v_dim;
    // Checked at load, not at the first decode inside a capture (kernels/gdn.hpp's limits).
    if (shape_.k_heads <= 0 || shape_.v_heads <= 0 || shape_.v_heads % shape_.k_heads != 0 || shape_.k_dim <= 0 ||
        shape_.k_dim > 1024 || shape_.v_dim <= 0 || shape_.v_dim > 1024 || shape_.conv_kernel < 1)
      throw EngineError("cuda backend: layer " + std::to_string(layer) + ": gated_deltanet shape (key heads " +
                        std::to_string(shape_.k_heads) + ", value heads " + std::to_string(shape_.v_heads) + ", head dims " +
                        std::to_string(shape_.k_dim) + "/" + std::to_string(shape_.v_dim) + ", conv kernel " +
                        std::to_string(shape_.conv_kernel) + ") needs value heads a multiple of key heads, head dims in [1, 1024], "
                        "conv kernel >= 1");
  }
  const char* kind() const override { return "gated_deltanet"; }

  void layout(Arenas& a) override {
    const std::size_t start = a.weights.used();
    attn_norm_ = take<float>(a.weights, padded_ld(c_.dim));
    w_in_ = take(a.weights, wt_, static_cast<std::size_t>(shape_.proj_dim()) * ld_dim_);
    conv_w_ = take<float>(a.weights, padded_ld(shape_.conv_dim() * shape_.conv_kernel));
    dt_bias_ = take<float>(a.weights, padded_ld(shape_.v_heads));
    a_neg_ = take<float>(a.weights, padded_ld(shape_.v_heads));
    norm_ = take<float>(a.weights, padded_ld(shape_.v_dim));
    w_out_ = take(a.weights, wt_, static_cast<std::size_t>(c_.dim) * ld_value_);
    weight_bytes_ = a.weights.used() - start;
    state_ = take<float>(a.state, conv_floats_ + ssm_floats_);
    proj_ = take<float>(a.workspace, shape_.proj_dim());
    conv_out_ = take<float>(a.workspace, shape_.conv_dim());
    core_ = take(a.workspace, wt_, ld_value_);
  }

  void upload(const ModelWeights& mw, Uploader& up) override {
    const LayerWeights& l = mw.layers[static_cast<std::size_t>(layer_)];
    const DeltaNetWeights& g = l.gdn;
    const std::string blk = "blk." + std::to_string(layer_) + ".";
    up.f32(l.attn_norm, c_.dim, attn_norm_, (blk + "attn_norm").c_str());
    // The checkpoint groups in_proj_qkvz rows by key head: [q (dk) | k (dk) | v (r dv) | z (r dv)],
    // and in_proj_ba by key head: [b (r) | a (r)]. The device keeps [q | k | v | z] of all heads,
    // then [b | a]: the conv reads its channels, and every kernel its heads, contiguously.
    const int kh = shape_.k_heads, dk = shape_.k_dim, dv = shape_.v_dim, r = shape_.v_heads / kh;
    const int group = 2 * dk + 2 * r * dv;
    std::vector<int> qkvz;
    for (int part = 0; part < 4; ++part)
      for (int h = 0; h < kh; ++h) {
        const int off = part == 0 ? 0 : part == 1 ? dk : part == 2 ? 2 * dk : 2 * dk + r * dv;
        const int len = part < 2 ? dk : r * dv;
        for (int i = 0; i < len; ++i) qkvz.push_back(h * group + off + i);
      }
    std::vector<int> ba;
    for (int part = 0; part < 2; ++part)
      for (int h = 0; h < kh; ++h)
        for (int i = 0; i < r; ++i) ba.push_back(h * 2 * r + part * r + i);
    const int qkvz_rows = c_.gdn_qkvz_dim();
    up.gather_rows(g.in_qkvz, qkvz_rows, c_.dim, qkvz, w_in_, ld_dim_, (blk + "ssm_in").c_str());
    up.gather_rows(g.in_ba, 2 * shape_.v_heads, c_.dim, ba,
                   static_cast<char*>(w_in_) + static_cast<std::size_t>(qkvz_rows) * ld_dim_ * kernels::elem_size(wt_),
                   ld_dim_, (blk + "ssm_ba").c_str());
    up.f32(g.conv1d, static_cast<std::size_t>(shape_.conv_dim()) * shape_.conv_kernel, conv_w_, (blk + "ssm_conv1d").c_str());
    up.f32(g.dt_bias, shape_.v_heads, dt_bias_, (blk + "ssm_dt.bias").c_str());
    up.f32(g.a, shape_.v_heads, a_neg_, (blk + "ssm_a").c_str());
    up.f32(g.norm, shape_.v_dim, norm_, (blk + "ssm_norm").c_str());
    up.rows(g.out, c_.dim, shape_.value_dim(), w_out_, ld_value_, ld_value_, (blk + "ssm_out").c_str());
  }

  void decode(StepContext& s) override {
    cudaStream_t st = s.tape.stream();
    s.tape.kernel(Stage::gdn_in_proj, [&] {
      kernels::gemv({wt_, w_in_, shape_.proj_dim(), c_.dim, ld_dim_, kernels::GemvInput::rmsnorm, s.x, attn_norm_,
                     c_.rms_eps, kernels::GemvOutput::store, proj_},
                    st);
    });
    s.tape.kernel(Stage::gdn_conv, [&] {
      kernels::gdn_conv_decode({shape_, proj_, conv_w_, state_, conv_out_}, st);
    });
    s.tape.kernel(Stage::gdn_recurrence, [&] {  // the gated RMSNorm fused
      kernels::gdn_recurrence_decode(recurrence_args(conv_out_, proj_, core_), st);
    });
    s.tape.kernel(Stage::gdn_out_proj, [&] {
      kernels::gemv({wt_, w_out_, c_.dim, shape_.value_dim(), ld_value_, kernels::GemvInput::plain, core_, nullptr, 0.0f,
                     kernels::GemvOutput::add, s.x},
                    st);
    });
  }

  bool has_chunked_prefill() const override { return true; }
  int prefill_f_cols() const override { return shape_.proj_dim() + shape_.conv_dim(); }
  int prefill_xb_cols() const override { return std::max(ld_dim_, ld_value_); }

  /// A chunk of n tokens: the projections as GEMMs over the chunk; the conv and the recurrence
  /// walk the chunk's tokens in order inside one launch each (the one-token arithmetic), so the
  /// state after the chunk is the state after decoding its tokens one by one.
  void prefill(PrefillContext& p) override {
    cudaStream_t st = p.tape.stream();
    const int n = p.n, P = shape_.proj_dim(), C = shape_.conv_dim();
    float* proj = p.f;                                  // [n][P]
    float* conv = p.f + static_cast<std::size_t>(n) * P;  // [n][C]
    p.tape.work(Stage::attn_norm, [&] { kernels::rmsnorm_rows(wt_, p.x, attn_norm_, c_.rms_eps, n, c_.dim, p.xb, ld_dim_, st); });
    p.tape.work(Stage::gdn_in_proj, [&] {
      prefill_gemm(p.cublas, wt_, w_in_, P, c_.dim, ld_dim_, p.xb, ld_dim_, n, proj, P, false, 0.0f);
    });
    p.tape.work(Stage::gdn_conv, [&] {
      kernels::GdnConvArgs a;
      a.shape = shape_;
      a.proj = proj;
      a.weight = conv_w_;
      a.state = state_;
      a.out = conv;
      a.n_tokens = n;
      a.proj_ld = P;
      a.out_ld = C;
      kernels::gdn_conv_decode(a, st);
    });
    p.tape.work(Stage::gdn_recurrence, [&] {  // the gated RMSNorm fused; out over the normed x (consumed)
      kernels::GdnRecurrenceArgs a = recurrence_args(conv, proj, p.xb);
      a.n_tokens = n;
      a.conv_ld = C;
      a.proj_ld = P;
      a.out_ld = ld_value_;
      kernels::gdn_recurrence_decode(a, st);
    });
    p.tape.work(Stage::gdn_out_proj, [&] {  // residual add: beta 1
      prefill_gemm(p.cublas, wt_, w_out_, c_.dim, shape_.value_dim(), ld_value_, p.xb, ld_value_, n, p.x, c_.dim, false, 1.0f);
    });
  }

  std::vector<Stage> stages() const override {
    // attn_norm runs in in_proj's prologue, the gated RMSNorm inside the recurrence kernel.
    return {Stage::attn_norm, Stage::gdn_in_proj, Stage::gdn_conv, Stage::gdn_recurrence, Stage::gdn_norm, Stage::gdn_out_proj};
  }
  std::optional<std::string> capture_veto() const override {
    if (veto_) return std::string("capture refused by the ATLAS_CUDA_VETO_LAYER test hook");
    return std::nullopt;
  }
  DeviceState recurrent_state() const override { return {state_, sizeof(float) * (conv_floats_ + ssm_floats_)}; }
  std::size_t bytes_per_token(int) const override {
    return weight_bytes_ + 2 * sizeof(float) * (conv_floats_ + ssm_floats_);  // state read and written
  }
  std::size_t weight_bytes() const override { return weight_bytes_; }

 private:
  /// The recurrence kernel's arguments over this layer's weights and state (one token; prefill
  /// adds the chunk's length and strides).
  kernels::GdnRecurrenceArgs recurrence_args(const float* conv, const float* proj, void* out) const {
    kernels::GdnRecurrenceArgs a;
    a.shape = shape_;
    a.wtype = wt_;
    a.conv = conv;
    a.proj = proj;
    a.a_neg = a_neg_;
    a.dt_bias = dt_bias_;
    a.norm = norm_;
    a.eps = c_.rms_eps;
    a.state = state_ + conv_floats_;
    a.out = out;
    return a;
  }

  const ModelConfig& c_;
  int layer_;
  ElemType wt_;
  bool veto_;
  kernels::GdnShape shape_;
  int ld_dim_ = 0, ld_value_ = 0;
  std::size_t conv_floats_ = 0, ssm_floats_ = 0, weight_bytes_ = 0;
  void *w_in_ = nullptr, *w_out_ = nullptr;
  float* attn_norm_ = nullptr;  ///< gain, float32
  float *conv_w_ = nullptr, *dt_bias_ = nullptr, *a_neg_ = nullptr, *norm_ = nullptr;
  float* state_ = nullptr;    ///< conv window, then the recurrent state
  float* proj_ = nullptr;     ///< [proj_dim]
  float* conv_out_ = nullptr; ///< [conv_dim]
  void* core_ = nullptr;      ///< weight type [ld_value]
};

}  // namespace

std::unique_ptr<DeviceBlock> make_deltanet_block(const ModelConfig& c, int layer, ElemType wt, bool veto) {
  return std::make_unique<DeltaNetBlock>(c, layer, wt, veto);
}

}  // namespace atlas::engine::cuda
