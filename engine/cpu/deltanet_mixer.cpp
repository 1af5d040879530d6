// gated_deltanet mixer (Qwen3-Next linear attention; Hugging Face transformers 5.17,
// models/qwen3_next/modeling_qwen3_next.py, Qwen3NextGatedDeltaNet): in_proj_qkvz / in_proj_ba, causal conv1d + SiLU over [q | k | v], L2-normalised q and k
// (q scaled by k_head_dim^-1/2), beta = sigmoid(b), g = -exp(A_log) * softplus(a + dt_bias),
// the gated delta rule per value head (recurrent for one token, chunked for a prefill), the
// gated RMSNorm per value head, out_proj.
#include <cmath>

#include "engine/cpu/blocks.hpp"
#include "engine/cpu/gdn.hpp"
#include "engine/cpu/matmul.hpp"
#include "engine/cpu/ops.hpp"

namespace atlas::engine::cpu {

namespace {

constexpr int kGdnChunk = 64;  // HF torch_chunk_gated_delta_rule's chunk_size

class DeltaNetMixer final : public Mixer {
 public:
  DeltaNetMixer(const ModelConfig& c, const LayerWeights& w) : c_(c), w_(w.gdn) {
    conv_floats_ = static_cast<std::size_t>(c.gdn_conv_dim()) * static_cast<std::size_t>(c.gdn_conv_kernel - 1);
    ssm_floats_ = static_cast<std::size_t>(c.gdn_v_heads) * static_cast<std::size_t>(c.gdn_k_head_dim) *
                  static_cast<std::size_t>(c.gdn_v_head_dim);
    state_.assign(conv_floats_ + ssm_floats_, 0.0f);
  }

  MixerKind kind() const override { return MixerKind::gated_deltanet; }
  std::vector<Stage> stages() const override {
    return {Stage::gdn_in_proj, Stage::gdn_conv, Stage::gdn_recurrence, Stage::gdn_norm, Stage::gdn_out_proj};
  }
  std::span<float> recurrent_state() override { return state_; }

  void forward(const BlockContext& ctx, float* xb) override {
    const int n = ctx.n, dim = c_.dim;
    const int kh = c_.gdn_k_heads, vh = c_.gdn_v_heads, dk = c_.gdn_k_head_dim, dv = c_.gdn_v_head_dim;
    const int r = vh / kh;  // value heads per key head
    const int key_dim = c_.gdn_key_dim(), value_dim = c_.gdn_value_dim(), conv_dim = c_.gdn_conv_dim(), qkvz_dim = c_.gdn_qkvz_dim();
    const std::size_t nn = static_cast<std::size_t>(n);
    float* conv_state = state_.data();
    float* ssm = state_.data() + conv_floats_;

    float* qkvz = ctx.ws.get(Workspace::proj, nn * static_cast<std::size_t>(qkvz_dim));
    float* ba = ctx.ws.get(Workspace::proj2, nn * 2 * static_cast<std::size_t>(vh));
    float* mixed = ctx.ws.get(Workspace::q, nn * static_cast<std::size_t>(conv_dim));     // [n][q | k | v] before conv
    float* conv = ctx.ws.get(Workspace::conv, nn * static_cast<std::size_t>(conv_dim));   // after conv + SiLU
    float* z = ctx.ws.get(Workspace::gate, nn * static_cast<std::size_t>(value_dim));
    float* gb = ctx.ws.get(Workspace::hb2, nn * 2 * static_cast<std::size_t>(vh));        // [n][g (vh) | beta (vh)]
    float* core = ctx.ws.get(Workspace::core, nn * static_cast<std::size_t>(value_dim));
    {
      auto s = ctx.timer.scope(Stage::gdn_in_proj);
      matmul_fused(ctx.pool, xb, n, dim, {{qkvz, w_.in_qkvz, qkvz_dim}, {ba, w_.in_ba, 2 * vh}});
      // Un-group the checkpoint layout: key head g holds [q | k | v (r heads) | z (r heads)] and [b (r) | a (r)].
      const int group = 2 * dk + 2 * r * dv;
      for (int t = 0; t < n; ++t) {
        const float* src = qkvz + static_cast<long>(t) * qkvz_dim;
        float* m = mixed + static_cast<long>(t) * conv_dim;
        float* zt = z + static_cast<long>(t) * value_dim;
        const float* bat = ba + static_cast<long>(t) * 2 * vh;
        float* gbt = gb + static_cast<long>(t) * 2 * vh;
        for (int g = 0; g < kh; ++g) {
          const float* gs = src + static_cast<long>(g) * group;
          std::copy(gs, gs + dk, m + g * dk);
          std::copy(gs + dk, gs + 2 * dk, m + key_dim + g * dk);
          std::copy(gs + 2 * dk, gs + 2 * dk + r * dv, m + 2 * key_dim + g * r * dv);
          std::copy(gs + 2 * dk + r * dv, gs + 2 * dk + 2 * r * dv, zt + g * r * dv);
          for (int i = 0; i < r; ++i) {
            const int h = g * r + i;
            const float b = bat[g * 2 * r + i], a = bat[g * 2 * r + r + i];
            gbt[h] = w_.a[static_cast<std::size_t>(h)] * softplus(a + w_.dt_bias[static_cast<std::size_t>(h)]);  // a = -exp(A_log)
            gbt[vh + h] = sigmoid(b);
          }
        }
      }
    }
    {
      auto s = ctx.timer.scope(Stage::gdn_conv);
      causal_conv1d_silu(mixed, conv, n, conv_dim, conv_dim, w_.conv1d.data(), c_.gdn_conv_kernel, conv_state);
      const float q_scale = 1.0f / std::sqrt(static_cast<float>(dk));
      for (int t = 0; t < n; ++t) {
        float* ct = conv + static_cast<long>(t) * conv_dim;
        for (int g = 0; g < kh; ++g) {
          float* qh = ct + g * dk;
          float* kk = ct + key_dim + g * dk;
          l2_normalize(qh, dk, 1e-6f);
          l2_normalize(kk, dk, 1e-6f);
          for (int i = 0; i < dk; ++i) qh[i] *= q_scale;
        }
      }
    }
    {
      auto s = ctx.timer.scope(Stage::gdn_recurrence);
      auto run = [&](int, int begin, int end) {
        for (int h = begin; h < end; ++h) {
          const int g = h / r;  // HF repeat_interleave: value head h reads key head h / r
          GdnSeq seq{conv + g * dk, conv + key_dim + g * dk, conv + 2 * key_dim + h * dv, gb + h, gb + vh + h, core + h * dv,
                     conv_dim, conv_dim, conv_dim, 2 * vh, value_dim};
          float* S = ssm + static_cast<long>(h) * dk * dv;
          if (n == 1) gdn_recurrent(S, seq, n, dk, dv);
          else gdn_chunked(S, seq, n, dk, dv, kGdnChunk);
        }
      };
      if (ctx.pool.size() == 1 || static_cast<long long>(n) * dk * dv * vh < (1 << 15)) run(0, 0, vh);
      else ctx.pool.parallel_for(vh, run);
    }
    {
      auto s = ctx.timer.scope(Stage::gdn_norm);
      for (int t = 0; t < n; ++t) {
        for (int h = 0; h < vh; ++h) {
          float* o = core + static_cast<long>(t) * value_dim + h * dv;
          gated_rmsnorm(o, o, z + static_cast<long>(t) * value_dim + h * dv, w_.norm.data(), dv, c_.rms_eps);
        }
      }
    }
    {
      auto s = ctx.timer.scope(Stage::gdn_out_proj);
      matmul(ctx.pool, xb, core, w_.out, n, value_dim, dim);
    }
  }

 private:
  const ModelConfig& c_;
  const DeltaNetWeights& w_;
  std::size_t conv_floats_ = 0, ssm_floats_ = 0;
  std::vector<float> state_;  ///< [conv_dim][kernel - 1] conv state, then [v_heads][k_dim][v_dim] recurrent state
};

}  // namespace

std::unique_ptr<Mixer> make_deltanet_mixer(const Model& m, int layer) {
  return std::make_unique<DeltaNetMixer>(m.config, m.weights.layers[static_cast<std::size_t>(layer)]);
}

}  // namespace atlas::engine::cpu
