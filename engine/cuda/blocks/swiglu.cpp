// swiglu ffn (dense SwiGLU MLP, Shazeer 2020; llama2.c run.c) on the device. Decode is two
// launches: the gate/up GEMV (ffn_norm in its prologue, rows interleaved gate_i, up_i, SwiGLU
// in its epilogue) and the down GEMV (the residual add in its epilogue).
#include <string>

#include "engine/cuda/blocks/block_util.hpp"
#include "engine/cuda/blocks/device_block.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/gemv.hpp"

namespace atlas::engine::cuda {

using kernels::ElemType;
using kernels::padded_ld;

namespace {

class SwigluBlock final : public DeviceBlock {
 public:
  SwigluBlock(const ModelConfig& c, int layer, ElemType wt) : c_(c), layer_(layer), wt_(wt) {
    ld_dim_ = padded_ld(c.dim);
    ld_hidden_ = padded_ld(c.hidden_dim);
  }
  const char* kind() const override { return "swiglu"; }

  void layout(Arenas& a) override {
    const std::size_t start = a.weights.used();
    ffn_norm_ = take<float>(a.weights, padded_ld(c_.dim));
    wgu_ = take(a.weights, wt_, 2 * static_cast<std::size_t>(c_.hidden_dim) * ld_dim_);
    wdown_ = take(a.weights, wt_, static_cast<std::size_t>(c_.dim) * ld_hidden_);
    weight_bytes_ = a.weights.used() - start;
    hb_ = take(a.workspace, wt_, ld_hidden_);
  }

  void upload(const ModelWeights& mw, Uploader& up) override {
    const LayerWeights& l = mw.layers[static_cast<std::size_t>(layer_)];
    const std::string blk = "blk." + std::to_string(layer_) + ".";
    const std::size_t es = kernels::elem_size(wt_);
    up.f32(l.ffn_norm, c_.dim, ffn_norm_, (blk + "ffn_norm").c_str());
    char* gu = static_cast<char*>(wgu_);
    up.rows(l.w_gate, c_.hidden_dim, c_.dim, gu, ld_dim_, 2 * ld_dim_, (blk + "ffn_gate").c_str());
    up.rows(l.w_up, c_.hidden_dim, c_.dim, gu + static_cast<std::size_t>(ld_dim_) * es, ld_dim_, 2 * ld_dim_,
            (blk + "ffn_up").c_str());
    up.rows(l.w_down, c_.dim, c_.hidden_dim, wdown_, ld_hidden_, ld_hidden_, (blk + "ffn_down").c_str());
  }

  void decode(StepContext& s) override {
    cudaStream_t st = s.tape.stream();
    s.tape.kernel(Stage::ffn_gate_up, [&] {  // ffn_norm in the prologue, SwiGLU in the epilogue
      kernels::gemv({wt_, wgu_, 2 * c_.hidden_dim, c_.dim, ld_dim_, kernels::GemvInput::rmsnorm, s.x, ffn_norm_,
                     c_.rms_eps, kernels::GemvOutput::swiglu, hb_},
                    st);
    });
    s.tape.kernel(Stage::ffn_down, [&] {
      kernels::gemv({wt_, wdown_, c_.dim, c_.hidden_dim, ld_hidden_, kernels::GemvInput::plain, hb_, nullptr, 0.0f,
                     kernels::GemvOutput::add, s.x},
                    st);
    });
  }

  bool has_chunked_prefill() const override { return true; }

  void prefill(PrefillContext& p) override {
    cudaStream_t s = p.tape.stream();
    const int n = p.n;
    p.tape.work(Stage::ffn_norm, [&] { kernels::rmsnorm_rows(wt_, p.x, ffn_norm_, c_.rms_eps, n, c_.dim, p.xb, ld_dim_, s); });
    p.tape.work(Stage::ffn_gate_up, [&] {
      // Gate/up in the weight type: half the bytes of the widest activation (HF rounds it too).
      prefill_gemm(p.cublas, wt_, wgu_, 2 * c_.hidden_dim, c_.dim, ld_dim_, p.xb, ld_dim_, n, p.f, 2 * c_.hidden_dim, true, 0.0f);
      kernels::swiglu_rows(wt_, p.f, n, c_.hidden_dim, p.xb, ld_hidden_, s);
    });
    p.tape.work(Stage::ffn_down, [&] {
      prefill_gemm(p.cublas, wt_, wdown_, c_.dim, c_.hidden_dim, ld_hidden_, p.xb, ld_hidden_, n, p.x, c_.dim, false, 1.0f);
    });
  }

  // ffn_norm runs in the gate/up GEMV's prologue.
  std::vector<Stage> stages() const override { return {Stage::ffn_norm, Stage::ffn_gate_up, Stage::ffn_down}; }
  std::size_t bytes_per_token(int) const override {
    return (2 * static_cast<std::size_t>(c_.hidden_dim) * ld_dim_ + static_cast<std::size_t>(c_.dim) * ld_hidden_) *
               kernels::elem_size(wt_) +
           c_.dim * sizeof(float);  // the gain
  }
  std::size_t weight_bytes() const override { return weight_bytes_; }

 private:
  const ModelConfig& c_;
  int layer_;
  ElemType wt_;
  int ld_dim_ = 0, ld_hidden_ = 0;
  std::size_t weight_bytes_ = 0;
  float* ffn_norm_ = nullptr;  ///< gain, float32
  void *wgu_ = nullptr, *wdown_ = nullptr;
  void* hb_ = nullptr;  ///< weight type [ld_hidden]
};

}  // namespace

std::unique_ptr<DeviceBlock> make_swiglu_block(const ModelConfig& c, int layer, ElemType wt) {
  return std::make_unique<SwigluBlock>(c, layer, wt);
}

}  // namespace atlas::engine::cuda
