#include "engine/cpu/matmul.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ATLAS_X86 1
#endif

namespace atlas::engine::cpu {

namespace {

// Rows of w handled together: each x vector loaded once serves R rows.
constexpr int kRows = 4;
// Tokens handled together: each w vector loaded once serves T tokens.
constexpr int kTokens = 3;
// Rows per cache block: the block's rows stay in L2 while every token passes over them.
constexpr int kRowBlock = 16;
// Below this many multiply-adds a job runs on the calling thread (waking workers costs more).
constexpr long long kParallelMacs = 1 << 16;

/// y[t * ldy + r] = dot(w row r, x row t) for R rows and T tokens (portable version).
template <int R, int T>
void block_portable(const float* w, const float* x, float* y, int in, int ldy) {
  float acc[R][T][8] = {};
  int i = 0;
  for (; i + 8 <= in; i += 8) {
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) {
        for (int j = 0; j < 8; ++j) acc[r][t][j] += w[r * in + i + j] * x[t * in + i + j];
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float s = 0.0f;
      for (int j = 0; j < 8; ++j) s += acc[r][t][j];
      for (int k = i; k < in; ++k) s += w[r * in + k] * x[t * in + k];
      y[t * ldy + r] = s;
    }
  }
}

#ifdef ATLAS_X86
__attribute__((target("avx2,fma"))) inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <int R, int T>
__attribute__((target("avx2,fma"))) void block_avx2(const float* w, const float* x, float* y, int in, int ldy) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= in; i += 8) {
    __m256 xv[T];
    for (int t = 0; t < T; ++t) xv[t] = _mm256_loadu_ps(x + t * in + i);
    for (int r = 0; r < R; ++r) {
      const __m256 wv = _mm256_loadu_ps(w + r * in + i);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float s = hsum(acc[r][t]);
      for (int k = i; k < in; ++k) s += w[r * in + k] * x[t * in + k];
      y[t * ldy + r] = s;
    }
  }
}

__attribute__((target("avx2,fma"))) float dot_avx2(const float* a, const float* b, int n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
  float s = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// exp(x) for 8 lanes (Cephes expf, as in avx_mathfun): 2^n * p(r), x = n ln2 + r.
__attribute__((target("avx2,fma"))) inline __m256 exp256(__m256 x) {
  x = _mm256_min_ps(x, _mm256_set1_ps(88.3762626647949f));
  x = _mm256_max_ps(x, _mm256_set1_ps(-88.3762626647949f));
  __m256 fx = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(0.5f));
  fx = _mm256_floor_ps(fx);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
  x = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), x);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 y = _mm256_set1_ps(1.9875691500e-4f);
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.3981999507e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(8.3334519073e-3f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(4.1665795894e-2f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(1.6666665459e-1f));
  y = _mm256_fmadd_ps(y, x, _mm256_set1_ps(5.0000001201e-1f));
  y = _mm256_fmadd_ps(y, z, _mm256_add_ps(x, _mm256_set1_ps(1.0f)));
  const __m256i n = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvttps_epi32(fx), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(y, _mm256_castsi256_ps(n));
}

__attribute__((target("avx2,fma"))) float exp_shifted_sum_avx2(float* x, int n, float shift) {
  const __m256 s = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  float sum = hsum(acc);
  for (; i < n; ++i) sum += (x[i] = std::exp(x[i] - shift));
  return sum;
}

bool cpu_has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}
#else
bool cpu_has_avx2() { return false; }
#endif

using BlockFn = void (*)(const float*, const float*, float*, int, int);

struct Kernels {
  BlockFn rt, r1, t1, one;  // R x T, R x 1, 1 x T, 1 x 1
};

Kernels kernels(bool avx2) {
#ifdef ATLAS_X86
  if (avx2 && cpu_has_avx2()) {
    return {block_avx2<kRows, kTokens>, block_avx2<kRows, 1>, block_avx2<1, kTokens>, block_avx2<1, 1>};
  }
#endif
  (void)avx2;
  return {block_portable<kRows, kTokens>, block_portable<kRows, 1>, block_portable<1, kTokens>, block_portable<1, 1>};
}

Kernels& active_kernels() {
  static Kernels k = kernels(true);
  return k;
}
bool g_use_avx2 = true;

/// Rows [r0, r1) of y for all n tokens.
void matmul_rows(const Kernels& k, float* y, const float* x, const float* w, int n, int in, int out, int r0, int r1) {
  for (int rb = r0; rb < r1; rb += kRowBlock) {
    const int re = std::min(r1, rb + kRowBlock);
    int t = 0;
    for (; t + kTokens <= n; t += kTokens) {
      const float* xt = x + static_cast<std::int64_t>(t) * in;
      float* yt = y + static_cast<std::int64_t>(t) * out;
      int r = rb;
      for (; r + kRows <= re; r += kRows) k.rt(w + static_cast<std::int64_t>(r) * in, xt, yt + r, in, out);
      for (; r < re; ++r) k.t1(w + static_cast<std::int64_t>(r) * in, xt, yt + r, in, out);
    }
    for (; t < n; ++t) {
      const float* xt = x + static_cast<std::int64_t>(t) * in;
      float* yt = y + static_cast<std::int64_t>(t) * out;
      int r = rb;
      for (; r + kRows <= re; r += kRows) k.r1(w + static_cast<std::int64_t>(r) * in, xt, yt + r, in, out);
      for (; r < re; ++r) k.one(w + static_cast<std::int64_t>(r) * in, xt, yt + r, in, out);
    }
  }
}

}  // namespace

bool matmul_uses_avx2() { return g_use_avx2 && cpu_has_avx2(); }

bool set_matmul_avx2(bool on) {
  g_use_avx2 = on;
  active_kernels() = kernels(on);
  return matmul_uses_avx2() == on;
}

float dot(const float* a, const float* b, int n) {
#ifdef ATLAS_X86
  if (g_use_avx2 && cpu_has_avx2()) return dot_avx2(a, b, n);
#endif
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

float exp_shifted_sum(float* x, int n, float shift) {
#ifdef ATLAS_X86
  if (g_use_avx2 && cpu_has_avx2()) return exp_shifted_sum_avx2(x, n, shift);
#endif
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - shift));
  return sum;
}

void matmul(ThreadPool& pool, float* y, const float* x, const float* w, int n, int in, int out) {
  const Kernels& k = active_kernels();
  const long long macs = static_cast<long long>(n) * in * out;
  if (macs < kParallelMacs || pool.size() == 1) {
    matmul_rows(k, y, x, w, n, in, out, 0, out);
    return;
  }
  pool.parallel_for(
      out, [&](int, int r0, int r1) { matmul_rows(k, y, x, w, n, in, out, r0, r1); }, kRowBlock);
}

void matmul_fused(ThreadPool& pool, const float* x, int n, int in, std::initializer_list<MatmulOut> products) {
  const Kernels& k = active_kernels();
  int total = 0;
  for (const auto& p : products) total += p.out;
  auto rows = [&](int, int r0, int r1) {
    // Global row range [r0, r1) -> the part of each product's rows it covers.
    int base = 0;
    for (const auto& p : products) {
      const int b = std::max(r0, base), e = std::min(r1, base + p.out);
      if (b < e) matmul_rows(k, p.y, x, p.w, n, in, p.out, b - base, e - base);
      base += p.out;
    }
  };
  if (static_cast<long long>(n) * in * total < kParallelMacs || pool.size() == 1) {
    rows(0, 0, total);
  } else {
    pool.parallel_for(total, rows, kRowBlock);
  }
}

}  // namespace atlas::engine::cpu
