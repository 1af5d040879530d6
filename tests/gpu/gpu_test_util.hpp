#pragma once
// Shared by the GPU tests: device detection (tests are skipped with the reason without one), a
// float64 reference forward pass (llama2.c's math, with Qwen3's q/k-norm and half-split RoPE),
// and random models held in host vectors.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine/cuda/cuda_decoder.hpp"
#include "engine/model.hpp"
#include "engine/stage.hpp"
#include "tests/skip.hpp"

namespace atlas::test::gpu {

/// Empty when a CUDA device is usable, else why not: the engine's own sentence (no driver, an
/// older driver, no visible device), so a skipped case reads as the machine's state, not as
/// cudart's "driver version is insufficient" on a machine that has no driver at all.
inline std::string no_gpu_reason() { return engine::cuda::no_usable_device_reason(); }

/// Skips the test case (tests/skip.hpp) when no CUDA device is usable: a CPU machine reports
/// the GPU tests Skipped with the reason. On a GPU machine every other missing input fails.
#define ATLAS_REQUIRE_GPU()                                                   \
  do {                                                                        \
    const std::string why_ = ::atlas::test::gpu::no_gpu_reason();             \
    if (!why_.empty()) ATLAS_SKIP(why_);                                      \
  } while (0)

/// Round-to-nearest-even float -> bf16 -> float (what the device does to bf16 weights).
inline float round_bf16(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

/// Decoder options the GPU tests start from: weight type, KV capacity and graph replay; the
/// rest are DecoderOptions' defaults.
inline engine::cuda::DecoderOptions decoder_options(kernels::ElemType wtype, int max_seq, bool graphs = true) {
  engine::cuda::DecoderOptions o;
  o.wtype = wtype;
  o.max_seq = max_seq;
  o.graphs = graphs;
  return o;
}

/// The kernels one decode step launches, stage by stage in launch order, derived from the
/// model's layer kinds (ModelConfig::block) and what each device block launches per step
/// (engine/cuda/blocks/, docs/architecture.md "The CUDA backend as blocks"; a stage fused into
/// another's kernel, such as attn_norm or ffn_norm, launches nothing): the head's embed, then
/// per layer its mixer's and its ffn's kernels, then lm_head and sample.
inline std::vector<engine::Stage> expected_decode_kernel_stages(const engine::ModelConfig& c) {
  using engine::Stage;
  std::vector<Stage> s = {Stage::embed};
  for (int l = 0; l < c.n_layers; ++l) {
    switch (c.block(l).mixer) {
      case engine::MixerKind::attention: s.insert(s.end(), {Stage::qkv, Stage::attention, Stage::o_proj}); break;
      case engine::MixerKind::gated_attention:
        s.insert(s.end(), {Stage::qkv, Stage::attention, Stage::attn_gate, Stage::o_proj});
        break;
      case engine::MixerKind::gated_deltanet:
        s.insert(s.end(), {Stage::gdn_in_proj, Stage::gdn_conv, Stage::gdn_recurrence, Stage::gdn_out_proj});
        break;
    }
    switch (c.block(l).ffn) {
      case engine::FfnKind::swiglu: s.insert(s.end(), {Stage::ffn_gate_up, Stage::ffn_down}); break;
      case engine::FfnKind::moe:  // router GEMV, normed input, top-k; experts' gate/up, down
        s.insert(s.end(), {Stage::moe_router, Stage::moe_router, Stage::moe_router, Stage::moe_experts, Stage::moe_experts});
        break;
    }
  }
  s.insert(s.end(), {Stage::lm_head, Stage::sample});
  return s;
}

/// Layers whose ffn is moe (each one a capture veto, a host sync and a copy pair per step when
/// routing on the host).
inline int moe_layers(const engine::ModelConfig& c) {
  int n = 0;
  for (int l = 0; l < c.n_layers; ++l) n += c.block(l).ffn == engine::FfnKind::moe;
  return n;
}

/// A model whose weights live in vectors owned here (Model's spans point into them).
struct HostModel {
  engine::Model model;
  std::vector<std::vector<float>> store;

  std::span<const float> add(std::size_t n, std::mt19937& rng, float lo, float hi) {
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = u(rng);
    store.push_back(std::move(v));
    return store.back();
  }
};

inline HostModel random_model(const engine::ModelConfig& c, std::uint32_t seed) {
  HostModel h;
  h.store.reserve(16 * c.n_layers + 8);
  std::mt19937 rng(seed);
  h.model.config = c;
  auto mat = [&](int rows, int cols) {
    const float a = std::sqrt(3.0f / cols);
    return h.add(static_cast<std::size_t>(rows) * cols, rng, -a, a);
  };
  auto gain = [&](int n) { return h.add(n, rng, 0.8f, 1.2f); };
  auto& w = h.model.weights;
  w.tok_embd = h.add(static_cast<std::size_t>(c.vocab_size) * c.dim, rng, -1.0f, 1.0f);
  for (int l = 0; l < c.n_layers; ++l) {
    engine::LayerWeights L;
    L.attn_norm = gain(c.dim);
    L.wq = mat(c.q_dim(), c.dim);
    L.wk = mat(c.kv_dim(), c.dim);
    L.wv = mat(c.kv_dim(), c.dim);
    L.wo = mat(c.dim, c.q_dim());
    if (c.qk_norm) {
      L.q_norm = gain(c.head_dim);
      L.k_norm = gain(c.head_dim);
    }
    L.ffn_norm = gain(c.dim);
    L.w_gate = mat(c.hidden_dim, c.dim);
    L.w_up = mat(c.hidden_dim, c.dim);
    L.w_down = mat(c.dim, c.hidden_dim);
    w.layers.push_back(L);
  }
  w.output_norm = gain(c.dim);
  w.output = c.tied_embeddings ? w.tok_embd : engine::Weight(mat(c.vocab_size, c.dim));
  return h;
}

/// Float64 reference decoder over its own KV cache. With bf16 = true, weights are rounded to
/// bf16 first (the device's storage), math stays float64.
class Reference {
 public:
  Reference(const engine::Model& m, bool bf16) : c_(m.config), m_(m), bf16_(bf16) {
    kc_.assign(c_.n_layers, std::vector<double>(static_cast<std::size_t>(c_.max_seq_len) * c_.kv_dim()));
    vc_ = kc_;
  }

  std::vector<double> step(int token, int pos) {
    const int d = c_.head_dim, G = c_.n_heads / c_.n_kv_heads;
    std::vector<double> x(c_.dim);
    for (int i = 0; i < c_.dim; ++i) x[i] = w(m_.weights.tok_embd, static_cast<std::size_t>(token) * c_.dim + i);
    for (int l = 0; l < c_.n_layers; ++l) {
      const auto& L = m_.weights.layers[l];
      auto xb = rmsnorm(x, L.attn_norm);
      auto q = matvec(L.wq, xb, c_.q_dim());
      auto k = matvec(L.wk, xb, c_.kv_dim());
      auto v = matvec(L.wv, xb, c_.kv_dim());
      for (int h = 0; h < c_.n_heads; ++h) head_prep(q.data() + h * d, L.q_norm, pos);
      for (int g = 0; g < c_.n_kv_heads; ++g) head_prep(k.data() + g * d, L.k_norm, pos);
      std::copy(k.begin(), k.end(), kc_[l].begin() + static_cast<std::size_t>(pos) * c_.kv_dim());
      std::copy(v.begin(), v.end(), vc_[l].begin() + static_cast<std::size_t>(pos) * c_.kv_dim());
      std::vector<double> att(c_.q_dim(), 0.0);
      for (int h = 0; h < c_.n_heads; ++h) {
        const int g = h / G;
        std::vector<double> s(pos + 1);
        double mx = -1e300;
        for (int t = 0; t <= pos; ++t) {
          double dot = 0;
          for (int i = 0; i < d; ++i) dot += q[h * d + i] * kc_[l][static_cast<std::size_t>(t) * c_.kv_dim() + g * d + i];
          s[t] = dot / std::sqrt(static_cast<double>(d));
          mx = std::max(mx, s[t]);
        }
        double sum = 0;
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (int t = 0; t <= pos; ++t)
          for (int i = 0; i < d; ++i)
            att[h * d + i] += s[t] / sum * vc_[l][static_cast<std::size_t>(t) * c_.kv_dim() + g * d + i];
      }
      auto o = matvec(L.wo, att, c_.dim);
      for (int i = 0; i < c_.dim; ++i) x[i] += o[i];
      xb = rmsnorm(x, L.ffn_norm);
      auto gt = matvec(L.w_gate, xb, c_.hidden_dim);
      auto up = matvec(L.w_up, xb, c_.hidden_dim);
      for (int i = 0; i < c_.hidden_dim; ++i) gt[i] = gt[i] / (1.0 + std::exp(-gt[i])) * up[i];
      auto dn = matvec(L.w_down, gt, c_.dim);
      for (int i = 0; i < c_.dim; ++i) x[i] += dn[i];
    }
    auto xf = rmsnorm(x, m_.weights.output_norm);
    return matvec(m_.weights.output, xf, c_.vocab_size);
  }

 private:
  double w(std::span<const float> s, std::size_t i) const { return bf16_ ? round_bf16(s[i]) : s[i]; }
  std::vector<double> rmsnorm(const std::vector<double>& x, std::span<const float> g) const {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double inv = 1.0 / std::sqrt(ss / x.size() + c_.rms_eps);
    std::vector<double> o(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) o[i] = w(g, i) * x[i] * inv;
    return o;
  }
  std::vector<double> matvec(std::span<const float> W, const std::vector<double>& x, int rows) const {
    std::vector<double> y(rows);
    const std::size_t k = x.size();
    for (int r = 0; r < rows; ++r) {
      double acc = 0;
      for (std::size_t i = 0; i < k; ++i) acc += w(W, r * k + i) * x[i];
      y[r] = acc;
    }
    return y;
  }
  void head_prep(double* v, std::span<const float> norm, int pos) const {
    const int d = c_.head_dim;
    if (!norm.empty()) {
      double ss = 0;
      for (int i = 0; i < d; ++i) ss += v[i] * v[i];
      const double inv = 1.0 / std::sqrt(ss / d + c_.rms_eps);
      for (int i = 0; i < d; ++i) v[i] = w(norm, i) * v[i] * inv;
    }
    std::vector<double> o(v, v + d);
    for (int i = 0; i < d / 2; ++i) {
      const double ang = pos * std::pow(static_cast<double>(c_.rope_theta), -2.0 * i / d);
      const int a = c_.rope_layout == engine::RopeLayout::interleaved ? 2 * i : i;
      const int b = c_.rope_layout == engine::RopeLayout::interleaved ? 2 * i + 1 : i + d / 2;
      o[a] = v[a] * std::cos(ang) - v[b] * std::sin(ang);
      o[b] = v[a] * std::sin(ang) + v[b] * std::cos(ang);
    }
    std::copy(o.begin(), o.end(), v);
  }

  engine::ModelConfig c_;
  const engine::Model& m_;
  bool bf16_;
  std::vector<std::vector<double>> kc_, vc_;
};

inline engine::ModelConfig tiny_llama() {
  engine::ModelConfig c;
  c.arch = engine::Arch::llama;
  c.name = "tiny-llama";
  c.dim = 64; c.hidden_dim = 172; c.n_layers = 2; c.n_heads = 8; c.n_kv_heads = 4; c.head_dim = 8;
  c.vocab_size = 512; c.max_seq_len = 512; c.rms_eps = 1e-5f; c.rope_theta = 10000.0f;
  c.rope_layout = engine::RopeLayout::interleaved; c.tied_embeddings = true; c.qk_norm = false;
  return c;
}

/// head_dim 64: decode attention takes the cluster kernel and prefill the flash kernel here,
/// while tiny_llama's head_dim 8 takes the split-K kernel and the cuBLAS score path.
inline engine::ModelConfig tiny_qwen3() {
  engine::ModelConfig c;
  c.arch = engine::Arch::qwen3;
  c.name = "tiny-qwen3";
  c.dim = 128; c.hidden_dim = 344; c.n_layers = 2; c.n_heads = 8; c.n_kv_heads = 2; c.head_dim = 64;
  c.vocab_size = 1000; c.max_seq_len = 640; c.rms_eps = 1e-6f; c.rope_theta = 1000000.0f;
  c.rope_layout = engine::RopeLayout::half; c.tied_embeddings = false; c.qk_norm = true;
  return c;
}

}  // namespace atlas::test::gpu
