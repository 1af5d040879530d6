#include "engine/cpu/ops.hpp"

#include <cmath>
#include <vector>

#include "engine/cpu/matmul.hpp"

namespace atlas::engine::cpu {

void rmsnorm(float* o, const float* x, const float* w, int n, float eps) {
  float ss = 0.0f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  ss = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int i = 0; i < n; ++i) o[i] = w[i] * (ss * x[i]);
}

void rope_angles(float* cos_out, float* sin_out, int pos, int head_dim, float theta) {
  for (int j = 0; j < head_dim / 2; ++j) {
    const float freq = 1.0f / std::pow(theta, static_cast<float>(2 * j) / static_cast<float>(head_dim));
    const float angle = static_cast<float>(pos) * freq;
    cos_out[j] = std::cos(angle);
    sin_out[j] = std::sin(angle);
  }
}

void rope_apply(float* head, const float* cos, const float* sin, int head_dim, RopeLayout layout) {
  const int half = head_dim / 2;
  for (int j = 0; j < half; ++j) {
    float* a = layout == RopeLayout::interleaved ? head + 2 * j : head + j;
    float* b = layout == RopeLayout::interleaved ? head + 2 * j + 1 : head + j + half;
    const float a0 = *a, b0 = *b;
    *a = a0 * cos[j] - b0 * sin[j];
    *b = a0 * sin[j] + b0 * cos[j];
  }
}

void rope(float* head, int pos, int head_dim, float theta, RopeLayout layout) {
  std::vector<float> c(static_cast<std::size_t>(head_dim / 2)), s(c.size());
  rope_angles(c.data(), s.data(), pos, head_dim, theta);
  rope_apply(head, c.data(), s.data(), head_dim, layout);
}

void softmax(float* x, int n) {
  float max_val = x[0];
  for (int i = 1; i < n; ++i) max_val = x[i] > max_val ? x[i] : max_val;
  const float inv = 1.0f / exp_shifted_sum(x, n, max_val);
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

void attention(float* __restrict out, const float* __restrict q, const float* __restrict k, const float* __restrict v, int n_pos,
               int head_dim, int stride, float* __restrict scores) {
  if (attention_simd(out, q, k, v, n_pos, head_dim, stride, scores)) return;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  int t = 0;
  if (head_dim < 32) {
    // Tiny heads (stories260K: 8): a call and a horizontal sum per score would cost more than
    // the math; four positions at a time keep four independent FMA chains in flight.
    for (; t + 4 <= n_pos; t += 4) {
      const float* k0 = k + static_cast<long>(t) * stride;
      const float *k1 = k0 + stride, *k2 = k1 + stride, *k3 = k2 + stride;
      float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
      for (int i = 0; i < head_dim; ++i) {
        s0 += q[i] * k0[i];
        s1 += q[i] * k1[i];
        s2 += q[i] * k2[i];
        s3 += q[i] * k3[i];
      }
      scores[t] = s0 * scale;
      scores[t + 1] = s1 * scale;
      scores[t + 2] = s2 * scale;
      scores[t + 3] = s3 * scale;
    }
  }
  for (; t < n_pos; ++t) scores[t] = dot(q, k + static_cast<long>(t) * stride, head_dim) * scale;
  softmax(scores, n_pos);
  for (int i = 0; i < head_dim; ++i) out[i] = 0.0f;
  for (int t = 0; t < n_pos; ++t) {
    const float a = scores[t];
    const float* vt = v + static_cast<long>(t) * stride;
    for (int i = 0; i < head_dim; ++i) out[i] += a * vt[i];
  }
}

float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

float softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }

void swiglu(float* gate, const float* up, int n) {
  for (int i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void add(float* x, const float* y, int n) {
  for (int i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace atlas::engine::cpu
