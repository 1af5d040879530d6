#include "engine/cpu/gdn.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace atlas::engine::cpu {

void gdn_recurrent_step(float* S, const float* q, const float* k, const float* v, float g, float beta, float* o, int dk, int dv) {
  const float decay = std::exp(g);
  thread_local std::vector<float> m;
  m.assign(static_cast<std::size_t>(dv), 0.0f);
  // S <- S * exp(g); m = S^T k
  for (int i = 0; i < dk; ++i) {
    float* row = S + static_cast<long>(i) * dv;
    const float ki = k[i];
    for (int j = 0; j < dv; ++j) {
      row[j] *= decay;
      m[static_cast<std::size_t>(j)] += row[j] * ki;
    }
  }
  // delta = beta (v - m), reusing m
  for (int j = 0; j < dv; ++j) m[static_cast<std::size_t>(j)] = (v[j] - m[static_cast<std::size_t>(j)]) * beta;
  // S <- S + k delta^T; o = S^T q
  std::fill(o, o + dv, 0.0f);
  for (int i = 0; i < dk; ++i) {
    float* row = S + static_cast<long>(i) * dv;
    const float ki = k[i], qi = q[i];
    for (int j = 0; j < dv; ++j) {
      row[j] += ki * m[static_cast<std::size_t>(j)];
      o[j] += row[j] * qi;
    }
  }
}

void gdn_recurrent(float* S, const GdnSeq& s, int n, int dk, int dv) {
  for (int t = 0; t < n; ++t) {
    gdn_recurrent_step(S, s.q + static_cast<long>(t) * s.q_stride, s.k + static_cast<long>(t) * s.k_stride,
                       s.v + static_cast<long>(t) * s.v_stride, s.g[static_cast<long>(t) * s.gb_stride],
                       s.beta[static_cast<long>(t) * s.gb_stride], s.o + static_cast<long>(t) * s.o_stride, dk, dv);
  }
}

void gdn_chunked(float* S, const GdnSeq& s, int n, int dk, int dv, int chunk) {
  const std::size_t C = static_cast<std::size_t>(chunk);
  std::vector<float> A(C * C), U(C * static_cast<std::size_t>(dv)), W(C * static_cast<std::size_t>(dk)), gc(C), row(C);
  for (int c0 = 0; c0 < n; c0 += chunk) {
    const int L = std::min(chunk, n - c0);
    auto q = [&](int i) { return s.q + static_cast<long>(c0 + i) * s.q_stride; };
    auto k = [&](int i) { return s.k + static_cast<long>(c0 + i) * s.k_stride; };
    auto v = [&](int i) { return s.v + static_cast<long>(c0 + i) * s.v_stride; };
    auto beta = [&](int i) { return s.beta[static_cast<long>(c0 + i) * s.gb_stride]; };
    float acc = 0.0f;
    for (int i = 0; i < L; ++i) {
      acc += s.g[static_cast<long>(c0 + i) * s.gb_stride];
      gc[static_cast<std::size_t>(i)] = acc;
    }
    auto a = [&](int i, int j) -> float& { return A[static_cast<std::size_t>(i) * C + static_cast<std::size_t>(j)]; };
    // A = -(k_beta k^T * decay) strictly below the diagonal.
    for (int i = 0; i < L; ++i) {
      for (int j = 0; j < L; ++j) {
        if (j >= i) {
          a(i, j) = 0.0f;
          continue;
        }
        float d = 0.0f;
        for (int x = 0; x < dk; ++x) d += k(i)[x] * beta(i) * k(j)[x];
        a(i, j) = -(d * std::exp(gc[static_cast<std::size_t>(i)] - gc[static_cast<std::size_t>(j)]));
      }
    }
    // Forward substitution, row by row (rows above are already final): T = (I - A)^-1 - I.
    for (int i = 1; i < L; ++i) {
      for (int j = 0; j < i; ++j) row[static_cast<std::size_t>(j)] = a(i, j);
      for (int j = 0; j < i; ++j) {
        float sum = row[static_cast<std::size_t>(j)];
        for (int m = j + 1; m < i; ++m) sum += row[static_cast<std::size_t>(m)] * a(m, j);
        a(i, j) = sum;
      }
    }
    for (int i = 0; i < L; ++i) a(i, i) = 1.0f;
    // U = T (v * beta); W = T (k * beta * exp(gc)).
    for (int i = 0; i < L; ++i) {
      float* u = U.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(dv);
      float* w = W.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(dk);
      std::fill(u, u + dv, 0.0f);
      std::fill(w, w + dk, 0.0f);
      for (int j = 0; j <= i; ++j) {
        const float t = a(i, j);
        const float tb = t * beta(j);
        const float tbe = tb * std::exp(gc[static_cast<std::size_t>(j)]);
        for (int x = 0; x < dv; ++x) u[x] += tb * v(j)[x];
        for (int x = 0; x < dk; ++x) w[x] += tbe * k(j)[x];
      }
    }
    // v_new = U - W S (into U).
    for (int i = 0; i < L; ++i) {
      float* u = U.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(dv);
      const float* w = W.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(dk);
      for (int x = 0; x < dk; ++x) {
        const float wx = w[x];
        const float* srow = S + static_cast<long>(x) * dv;
        for (int y = 0; y < dv; ++y) u[y] -= wx * srow[y];
      }
    }
    // o_i = exp(gc_i) q_i S + sum_{j <= i} (q_i . k_j) exp(gc_i - gc_j) v_new_j.
    for (int i = 0; i < L; ++i) {
      float* o = s.o + static_cast<long>(c0 + i) * s.o_stride;
      std::fill(o, o + dv, 0.0f);
      const float eg = std::exp(gc[static_cast<std::size_t>(i)]);
      for (int x = 0; x < dk; ++x) {
        const float qx = q(i)[x] * eg;
        const float* srow = S + static_cast<long>(x) * dv;
        for (int y = 0; y < dv; ++y) o[y] += qx * srow[y];
      }
      for (int j = 0; j <= i; ++j) {
        float d = 0.0f;
        for (int x = 0; x < dk; ++x) d += q(i)[x] * k(j)[x];
        d *= std::exp(gc[static_cast<std::size_t>(i)] - gc[static_cast<std::size_t>(j)]);
        const float* u = U.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(dv);
        for (int y = 0; y < dv; ++y) o[y] += d * u[y];
      }
    }
    // S <- S exp(gc_last) + sum_i exp(gc_last - gc_i) k_i v_new_i^T.
    const float glast = gc[static_cast<std::size_t>(L - 1)];
    const float elast = std::exp(glast);
    for (int x = 0; x < dk; ++x) {
      float* srow = S + static_cast<long>(x) * dv;
      for (int y = 0; y < dv; ++y) srow[y] *= elast;
    }
    for (int i = 0; i < L; ++i) {
      const float e = std::exp(glast - gc[static_cast<std::size_t>(i)]);
      const float* u = U.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(dv);
      for (int x = 0; x < dk; ++x) {
        const float kx = k(i)[x] * e;
        float* srow = S + static_cast<long>(x) * dv;
        for (int y = 0; y < dv; ++y) srow[y] += kx * u[y];
      }
    }
  }
}

void l2_normalize(float* x, int n, float eps) {
  float ss = 0.0f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(ss + eps);
  for (int i = 0; i < n; ++i) x[i] *= inv;
}


void causal_conv1d_silu(const float* x, float* y, int n, int ld, int channels, const float* w, int kernel, float* state) {
  const int hist = kernel - 1;
  for (int c = 0; c < channels; ++c) {
    const float* wc = w + static_cast<long>(c) * kernel;
    float* st = state + static_cast<long>(c) * hist;
    for (int t = 0; t < n; ++t) {
      // Inputs t - hist .. t; those before the chunk come from the state.
      float sum = 0.0f;
      for (int j = 0; j < kernel; ++j) {
        const int src = t - hist + j;
        const float in = src >= 0 ? x[static_cast<long>(src) * ld + c] : st[hist + src];
        sum += wc[j] * in;
      }
      y[static_cast<long>(t) * ld + c] = sum / (1.0f + std::exp(-sum));
    }
    // Advance the state to the last `hist` inputs.
    for (int j = 0; j < hist; ++j) {
      const int src = n - hist + j;
      st[j] = src >= 0 ? x[static_cast<long>(src) * ld + c] : st[hist + src];
    }
  }
}

void gated_rmsnorm(float* o, const float* x, const float* z, const float* w, int n, float eps) {
  float ss = 0.0f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int i = 0; i < n; ++i) {
    const float zi = z[i];
    o[i] = w[i] * (x[i] * inv) * (zi / (1.0f + std::exp(-zi)));
  }
}

}  // namespace atlas::engine::cpu
