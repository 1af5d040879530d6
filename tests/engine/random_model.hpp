#pragma once
// Test helpers: a small random-weight model (llama or qwen3) and an independent, naive float64
// forward pass to check the CPU backend against.
#include <cmath>
#include <random>
#include <vector>

#include "engine/model.hpp"

namespace atlas::test {

inline engine::Model random_model(engine::ModelConfig c, unsigned seed) {
  engine::Model m;
  m.config = c;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  auto tensor = [&](long long n, float mean = 0.0f) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = mean + normal(rng);
    return m.own(std::move(v));
  };
  const long long d = c.dim, h = c.hidden_dim, q = c.q_dim(), kv = c.kv_dim();
  m.weights.tok_embd = tensor(c.vocab_size * d);
  for (int l = 0; l < c.n_layers; ++l) {
    engine::LayerWeights w;
    w.attn_norm = tensor(d, 1.0f);
    w.wq = tensor(q * d);
    w.wk = tensor(kv * d);
    w.wv = tensor(kv * d);
    w.wo = tensor(d * q);
    if (c.qk_norm) {
      w.q_norm = tensor(c.head_dim, 1.0f);
      w.k_norm = tensor(c.head_dim, 1.0f);
    }
    w.ffn_norm = tensor(d, 1.0f);
    w.w_gate = tensor(h * d);
    w.w_up = tensor(h * d);
    w.w_down = tensor(d * h);
    m.weights.layers.push_back(w);
  }
  m.weights.output_norm = tensor(d, 1.0f);
  m.weights.output = c.tied_embeddings ? m.weights.tok_embd : engine::Weight(tensor(c.vocab_size * d));
  return m;
}

/// Naive float64 forward over the whole sequence; returns the logits of the last position.
inline std::vector<double> reference_logits(const engine::Model& m, const std::vector<int>& tokens) {
  const auto& c = m.config;
  const int d = c.dim, hd = c.head_dim, T = static_cast<int>(tokens.size());
  auto rms = [&](std::vector<double> x, std::span<const float> w) {
    double ss = 0;
    for (double v : x) ss += v * v;
    const double s = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + c.rms_eps);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = x[i] * s * w[i];
    return x;
  };
  auto mat = [](std::span<const float> w, const std::vector<double>& x, int out) {
    const int in = static_cast<int>(x.size());
    std::vector<double> y(static_cast<std::size_t>(out));
    for (int o = 0; o < out; ++o)
      for (int i = 0; i < in; ++i) y[static_cast<std::size_t>(o)] += w[static_cast<std::size_t>(o * in + i)] * x[static_cast<std::size_t>(i)];
    return y;
  };
  auto rope = [&](double* v, int pos) {
    for (int j = 0; j < hd / 2; ++j) {
      const double angle = pos * std::pow(static_cast<double>(c.rope_theta), -2.0 * j / hd);
      const int a = c.rope_layout == engine::RopeLayout::interleaved ? 2 * j : j;
      const int b = c.rope_layout == engine::RopeLayout::interleaved ? 2 * j + 1 : j + hd / 2;
      const double x0 = v[a], x1 = v[b];
      v[a] = x0 * std::cos(angle) - x1 * std::sin(angle);
      v[b] = x0 * std::sin(angle) + x1 * std::cos(angle);
    }
  };
  std::vector<std::vector<double>> x(static_cast<std::size_t>(T));
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i) x[static_cast<std::size_t>(t)].push_back(m.weights.tok_embd[static_cast<std::size_t>(tokens[static_cast<std::size_t>(t)] * d + i)]);
  for (const auto& lw : m.weights.layers) {
    std::vector<std::vector<double>> q(x.size()), k(x.size()), v(x.size());
    for (int t = 0; t < T; ++t) {
      const auto xb = rms(x[static_cast<std::size_t>(t)], lw.attn_norm);
      q[static_cast<std::size_t>(t)] = mat(lw.wq, xb, c.q_dim());
      k[static_cast<std::size_t>(t)] = mat(lw.wk, xb, c.kv_dim());
      v[static_cast<std::size_t>(t)] = mat(lw.wv, xb, c.kv_dim());
      for (int h = 0; h < c.n_heads; ++h) {
        double* qh = q[static_cast<std::size_t>(t)].data() + h * hd;
        if (c.qk_norm) {
          auto n = rms(std::vector<double>(qh, qh + hd), lw.q_norm);
          std::copy(n.begin(), n.end(), qh);
        }
        rope(qh, t);
      }
      for (int h = 0; h < c.n_kv_heads; ++h) {
        double* kh = k[static_cast<std::size_t>(t)].data() + h * hd;
        if (c.qk_norm) {
          auto n = rms(std::vector<double>(kh, kh + hd), lw.k_norm);
          std::copy(n.begin(), n.end(), kh);
        }
        rope(kh, t);
      }
    }
    for (int t = 0; t < T; ++t) {
      std::vector<double> att(static_cast<std::size_t>(c.q_dim()));
      for (int h = 0; h < c.n_heads; ++h) {
        const int kvh = h / (c.n_heads / c.n_kv_heads);
        std::vector<double> s(static_cast<std::size_t>(t + 1));
        double mx = -1e300;
        for (int u = 0; u <= t; ++u) {
          double dot = 0;
          for (int i = 0; i < hd; ++i) dot += q[static_cast<std::size_t>(t)][static_cast<std::size_t>(h * hd + i)] * k[static_cast<std::size_t>(u)][static_cast<std::size_t>(kvh * hd + i)];
          s[static_cast<std::size_t>(u)] = dot / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, s[static_cast<std::size_t>(u)]);
        }
        double sum = 0;
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (int u = 0; u <= t; ++u)
          for (int i = 0; i < hd; ++i) att[static_cast<std::size_t>(h * hd + i)] += s[static_cast<std::size_t>(u)] / sum * v[static_cast<std::size_t>(u)][static_cast<std::size_t>(kvh * hd + i)];
      }
      const auto o = mat(lw.wo, att, d);
      for (int i = 0; i < d; ++i) x[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] += o[static_cast<std::size_t>(i)];
      const auto xb = rms(x[static_cast<std::size_t>(t)], lw.ffn_norm);
      auto g = mat(lw.w_gate, xb, c.hidden_dim);
      const auto u = mat(lw.w_up, xb, c.hidden_dim);
      for (std::size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      const auto down = mat(lw.w_down, g, d);
      for (int i = 0; i < d; ++i) x[static_cast<std::size_t>(t)][static_cast<std::size_t>(i)] += down[static_cast<std::size_t>(i)];
    }
  }
  return mat(m.weights.output, rms(x.back(), m.weights.output_norm), c.vocab_size);
}

inline engine::ModelConfig tiny_config(engine::Arch arch) {
  engine::ModelConfig c;
  c.arch = arch;
  c.name = arch == engine::Arch::qwen3 ? "tiny-qwen3" : "tiny-llama";
  c.dim = 48;
  c.hidden_dim = 72;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.head_dim = arch == engine::Arch::qwen3 ? 16 : 12;  // qwen3: q_dim 64 != dim 48 (decoupled head_dim)
  c.vocab_size = 40;
  c.max_seq_len = 32;
  c.rms_eps = arch == engine::Arch::qwen3 ? 1e-6f : 1e-5f;
  c.rope_theta = arch == engine::Arch::qwen3 ? 1000000.0f : 10000.0f;
  c.rope_layout = arch == engine::Arch::qwen3 ? engine::RopeLayout::half : engine::RopeLayout::interleaved;
  c.tied_embeddings = arch == engine::Arch::qwen3;
  c.qk_norm = arch == engine::Arch::qwen3;
  return c;
}

}  // namespace atlas::test
