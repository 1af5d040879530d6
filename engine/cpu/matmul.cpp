#include "engine/cpu/matmul.hpp"

#include "engine/formats/dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>
#include <type_traits>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define ATLAS_X86 1
#endif

namespace atlas::engine::cpu {

namespace {

// Weight element types the kernels read: float32, and bf16 / f16 as files store them (converted
// to float32 in registers, so a bf16 matrix streams half the bytes of a float32 one).
struct Bf16 {
  std::uint16_t v;
};
struct F16 {
  std::uint16_t v;
};
inline float load1(const float* p) { return *p; }
inline float load1(const Bf16* p) { return bf16_to_f32(p->v); }
inline float load1(const F16* p) { return f16_to_f32(p->v); }

// Rows of w handled together: each x vector loaded once serves R rows.
constexpr int kRows = 4;
// Tokens handled together: each w vector loaded once serves T tokens.
constexpr int kTokens = 3;
// Rows per cache block: the block's rows stay in L2 while every token passes over them.
constexpr int kRowBlock = 16;
// Below this many multiply-adds a job runs on the calling thread (waking workers costs more).
constexpr long long kParallelMacs = 1 << 16;

/// y[t * ldy + r] = dot(w row r, x row t) for R rows and T tokens (portable version).
template <class WT, int R, int T>
void block_portable(const WT* w, const float* x, float* y, int in, int ldy) {
  float acc[R][T][8] = {};
  int i = 0;
  for (; i + 8 <= in; i += 8) {
    for (int r = 0; r < R; ++r) {
      for (int t = 0; t < T; ++t) {
        for (int j = 0; j < 8; ++j) acc[r][t][j] += load1(w + r * in + i + j) * x[t * in + i + j];
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float s = 0.0f;
      for (int j = 0; j < 8; ++j) s += acc[r][t][j];
      for (int k = i; k < in; ++k) s += load1(w + r * in + k) * x[t * in + k];
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

/// The horizontal sums of eight vectors, as one vector: a tree of hadds and one 128-bit swap
/// (11 instructions for 8 sums, where 8 separate hsum() calls take 40).
__attribute__((target("avx2,fma"))) inline __m256 hsum8(__m256 r0, __m256 r1, __m256 r2, __m256 r3, __m256 r4, __m256 r5,
                                                      __m256 r6, __m256 r7) {
  const __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(r0, r1), _mm256_hadd_ps(r2, r3));  // [0-3 lanes 0-3 | 0-3 lanes 4-7]
  const __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(r4, r5), _mm256_hadd_ps(r6, r7));
  return _mm256_add_ps(_mm256_permute2f128_ps(h0123, h4567, 0x20), _mm256_permute2f128_ps(h0123, h4567, 0x31));
}

__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const Bf16* p) {
  // bf16 is the top half of a float32: widen to 32 bits and shift into place.
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16));
}
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const F16* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

template <class WT, int R, int T>
__attribute__((target("avx2,fma,f16c"))) void block_avx2(const WT* w, const float* x, float* y, int in, int ldy) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= in; i += 8) {
    __m256 xv[T];
    for (int t = 0; t < T; ++t) xv[t] = _mm256_loadu_ps(x + t * in + i);
    for (int r = 0; r < R; ++r) {
      const __m256 wv = load8(w + r * in + i);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) {
      float s = hsum(acc[r][t]);
      for (int k = i; k < in; ++k) s += load1(w + r * in + k) * x[t * in + k];
      y[t * ldy + r] = s;
    }
  }
}

/// Decode (one token): eight rows per call, summed across lanes together by hsum8 and stored
/// with one store; a row tail shorter than 8 (stories260K's hidden 172) by masked loads.
template <>
__attribute__((target("avx2,fma,f16c"))) void block_avx2<float, 8, 1>(const float* w, const float* x, float* y, int in, int ldy) {
  (void)ldy;  // one token: y[0..7]
  __m256 acc[8];
  for (auto& a : acc) a = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= in; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    for (int r = 0; r < 8; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(w + static_cast<std::int64_t>(r) * in + i), xv, acc[r]);
  }
  if (i < in) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(in - i), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 xv = _mm256_maskload_ps(x + i, mask);
    for (int r = 0; r < 8; ++r)
      acc[r] = _mm256_fmadd_ps(_mm256_maskload_ps(w + static_cast<std::int64_t>(r) * in + i, mask), xv, acc[r]);
  }
  _mm256_storeu_ps(y, hsum8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
}

/// The 8 x 1 decode kernel above for bf16 / f16 weights, with the same arithmetic (the row tail
/// widened into a zero-padded block), so a typed weight gives bit-identical results to its
/// float32 widening.
template <class WT>
__attribute__((target("avx2,fma,f16c"))) void block_avx2_8x1_typed(const WT* w, const float* x, float* y, int in, int ldy) {
  (void)ldy;
  __m256 acc[8];
  for (auto& a : acc) a = _mm256_setzero_ps();
  int i = 0;
  for (; i + 8 <= in; i += 8) {
    const __m256 xv = _mm256_loadu_ps(x + i);
    for (int r = 0; r < 8; ++r) acc[r] = _mm256_fmadd_ps(load8(w + static_cast<std::int64_t>(r) * in + i), xv, acc[r]);
  }
  if (i < in) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(in - i), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 xv = _mm256_maskload_ps(x + i, mask);
    for (int r = 0; r < 8; ++r) {
      alignas(32) float tail[8] = {};
      for (int j = 0; j < in - i; ++j) tail[j] = load1(w + static_cast<std::int64_t>(r) * in + i + j);
      acc[r] = _mm256_fmadd_ps(_mm256_load_ps(tail), xv, acc[r]);
    }
  }
  _mm256_storeu_ps(y, hsum8(acc[0], acc[1], acc[2], acc[3], acc[4], acc[5], acc[6], acc[7]));
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

/// q . k_t for head_dim = 8 * C, still spread over the 8 lanes.
template <int C>
__attribute__((target("avx2,fma"))) inline __m256 qk_product(const __m256* qv, const float* kt) {
  __m256 acc = _mm256_mul_ps(qv[0], _mm256_loadu_ps(kt));
  for (int c = 1; c < C; ++c) acc = _mm256_fmadd_ps(qv[c], _mm256_loadu_ps(kt + 8 * c), acc);
  return acc;
}

/// attention() (ops.hpp) for head_dim = 8 * C. Scores of eight positions per step: the eight
/// q * k_t products are summed across lanes together (hsum8, no horizontal sum per position);
/// the scale is folded into q. V rows are summed weighted by the
/// unnormalised exp in U independent accumulator sets (one FMA chain per set would wait on the
/// FMA latency) and divided by the softmax denominator once.
template <int C>
__attribute__((target("avx2,fma"))) void attention_avx2(float* out, const float* q, const float* k, const float* v, int n_pos,
                                                        int stride, float scale, float* scores) {
  __m256 qv[C];
  for (int c = 0; c < C; ++c) qv[c] = _mm256_mul_ps(_mm256_loadu_ps(q + 8 * c), _mm256_set1_ps(scale));
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  int t = 0;
  for (; t + 8 <= n_pos; t += 8) {
    const float* kt = k + static_cast<std::int64_t>(t) * stride;
    const __m256 s = hsum8(qk_product<C>(qv, kt), qk_product<C>(qv, kt + 1 * stride), qk_product<C>(qv, kt + 2 * stride),
                           qk_product<C>(qv, kt + 3 * stride), qk_product<C>(qv, kt + 4 * stride),
                           qk_product<C>(qv, kt + 5 * stride), qk_product<C>(qv, kt + 6 * stride),
                           qk_product<C>(qv, kt + 7 * stride));
    _mm256_storeu_ps(scores + t, s);
    vmax = _mm256_max_ps(vmax, s);
  }
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  float max_score = _mm_cvtss_f32(m4);
  for (; t < n_pos; ++t) {
    scores[t] = hsum(qk_product<C>(qv, k + static_cast<std::int64_t>(t) * stride));
    max_score = std::max(max_score, scores[t]);
  }
  const float inv_sum = 1.0f / exp_shifted_sum_avx2(scores, n_pos, max_score);

  constexpr int U = C <= 2 ? 4 : (C <= 4 ? 2 : 1);
  __m256 acc[U][C];
  for (int u = 0; u < U; ++u)
    for (int c = 0; c < C; ++c) acc[u][c] = _mm256_setzero_ps();
  t = 0;
  for (; t + U <= n_pos; t += U) {
    for (int u = 0; u < U; ++u) {
      const __m256 a = _mm256_set1_ps(scores[t + u]);
      const float* vt = v + static_cast<std::int64_t>(t + u) * stride;
      for (int c = 0; c < C; ++c) acc[u][c] = _mm256_fmadd_ps(a, _mm256_loadu_ps(vt + 8 * c), acc[u][c]);
    }
  }
  for (; t < n_pos; ++t) {
    const __m256 a = _mm256_set1_ps(scores[t]);
    const float* vt = v + static_cast<std::int64_t>(t) * stride;
    for (int c = 0; c < C; ++c) acc[0][c] = _mm256_fmadd_ps(a, _mm256_loadu_ps(vt + 8 * c), acc[0][c]);
  }
  for (int c = 0; c < C; ++c) {
    __m256 sum = acc[0][c];
    for (int u = 1; u < U; ++u) sum = _mm256_add_ps(sum, acc[u][c]);
    _mm256_storeu_ps(out + 8 * c, _mm256_mul_ps(sum, _mm256_set1_ps(inv_sum)));
  }
}

/// Q8_0 blocks -> float32 (x = d * q), eight lanes at a time: exact, as the scalar dequantize().
__attribute__((target("avx2,fma,f16c"))) void q8_0_widen_avx2(const std::byte* w, std::size_t blocks, float* dst) {
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::byte* p = w + 34 * b;
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    const __m256 d = _mm256_set1_ps(f16_to_f32(h));
    for (int j = 0; j < 32; j += 8) {
      const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 2 + j));
      _mm256_storeu_ps(dst + 32 * b + j, _mm256_mul_ps(d, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q))));
    }
  }
}

bool cpu_has_avx2() {
  // F16C from CPUID leaf 1 (ECX bit 29): clang 16's __builtin_cpu_supports has no "f16c", and
  // the fuzz build (make fuzz) compiles this file with clang.
  const auto f16c = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
  };
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c();
  return yes;
}
#else
bool cpu_has_avx2() { return false; }
#endif

template <class WT>
using BlockFn = void (*)(const WT*, const float*, float*, int, int);

template <class WT>
struct Kernels {
  BlockFn<WT> rt, r1, t1, one;  // R x T, R x 1, 1 x T, 1 x 1
  BlockFn<WT> r8;               // 8 x 1: decode
};

template <class WT>
Kernels<WT> kernels(bool avx2) {
#ifdef ATLAS_X86
  if (avx2 && cpu_has_avx2()) {
    BlockFn<WT> r8 = block_avx2<WT, 8, 1>;  // float: the specialisation above
    if constexpr (!std::is_same_v<WT, float>) r8 = block_avx2_8x1_typed<WT>;
    return {block_avx2<WT, kRows, kTokens>, block_avx2<WT, kRows, 1>, block_avx2<WT, 1, kTokens>, block_avx2<WT, 1, 1>, r8};
  }
#endif
  (void)avx2;
  return {block_portable<WT, kRows, kTokens>, block_portable<WT, kRows, 1>, block_portable<WT, 1, kTokens>, block_portable<WT, 1, 1>,
          block_portable<WT, 8, 1>};
}

template <class WT>
Kernels<WT>& active_kernels() {
  static Kernels<WT> k = kernels<WT>(true);
  return k;
}
bool g_use_avx2 = true;

/// Rows [r0, r1) of y for all n tokens.
template <class WT>
void matmul_rows(const Kernels<WT>& k, float* y, const float* x, const WT* w, int n, int in, int out, int r0, int r1) {
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
      for (; r + 8 <= re; r += 8) k.r8(w + static_cast<std::int64_t>(r) * in, xt, yt + r, in, out);
      for (; r + kRows <= re; r += kRows) k.r1(w + static_cast<std::int64_t>(r) * in, xt, yt + r, in, out);
      for (; r < re; ++r) k.one(w + static_cast<std::int64_t>(r) * in, xt, yt + r, in, out);
    }
  }
}

/// Q8_0 rows [rb, rb + rows) (each `in` elements: in / 32 blocks of an f16 scale and 32 int8)
/// widened to float32 into dst, x = d * q as dequantize() computes it.
void q8_0_widen(const std::byte* w, int rows, int in, float* dst) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(in);
#ifdef ATLAS_X86
  if (g_use_avx2 && cpu_has_avx2()) {
    q8_0_widen_avx2(w, n / 32, dst);
    return;
  }
#endif
  dequantize(DType::q8_0, std::span<const std::byte>(w, n / 32 * 34), std::span<float>(dst, n));
}

/// Q8_0 weights: each block of kRowBlock rows is widened once into a per-thread buffer (it stays
/// in L1/L2) and multiplied by the float32 kernels, with the same row blocking as a float32
/// matrix, so the result is bit-identical to widening the whole tensor at load.
void q8_0_rows(float* y, const float* x, const std::byte* w, int n, int in, int out, int r0, int r1) {
  thread_local std::vector<float> buf;
  buf.resize(static_cast<std::size_t>(kRowBlock) * static_cast<std::size_t>(in));
  const std::size_t row_bytes = static_cast<std::size_t>(in / 32) * 34;
  for (int rb = r0; rb < r1; rb += kRowBlock) {
    const int re = std::min(r1, rb + kRowBlock);
    q8_0_widen(w + static_cast<std::size_t>(rb) * row_bytes, re - rb, in, buf.data());
    matmul_rows(active_kernels<float>(), y + rb, x, buf.data(), n, in, out, 0, re - rb);
  }
}

/// The rows [r0, r1) of one product, dispatched on the weight's storage.
void product_rows(float* y, const float* x, const void* w, DType t, int n, int in, int out, int r0, int r1) {
  switch (t) {
    case DType::q8_0: q8_0_rows(y, x, static_cast<const std::byte*>(w), n, in, out, r0, r1); return;
    case DType::bf16: matmul_rows(active_kernels<Bf16>(), y, x, static_cast<const Bf16*>(w), n, in, out, r0, r1); return;
    case DType::f16: matmul_rows(active_kernels<F16>(), y, x, static_cast<const F16*>(w), n, in, out, r0, r1); return;
    default: matmul_rows(active_kernels<float>(), y, x, static_cast<const float*>(w), n, in, out, r0, r1); return;
  }
}

}  // namespace

bool matmul_uses_avx2() { return g_use_avx2 && cpu_has_avx2(); }

bool set_matmul_avx2(bool on) {
  g_use_avx2 = on;
  active_kernels<float>() = kernels<float>(on);
  active_kernels<Bf16>() = kernels<Bf16>(on);
  active_kernels<F16>() = kernels<F16>(on);
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

bool attention_simd(float* out, const float* q, const float* k, const float* v, int n_pos, int head_dim, int stride,
                    float* scores) {
#ifdef ATLAS_X86
  if (!(g_use_avx2 && cpu_has_avx2()) || n_pos <= 0) return false;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  switch (head_dim) {
    case 8: attention_avx2<1>(out, q, k, v, n_pos, stride, scale, scores); return true;
    case 16: attention_avx2<2>(out, q, k, v, n_pos, stride, scale, scores); return true;
    case 32: attention_avx2<4>(out, q, k, v, n_pos, stride, scale, scores); return true;
    case 64: attention_avx2<8>(out, q, k, v, n_pos, stride, scale, scores); return true;
    default: return false;
  }
#else
  (void)out, (void)q, (void)k, (void)v, (void)n_pos, (void)head_dim, (void)stride, (void)scores;
  return false;
#endif
}

float exp_shifted_sum(float* x, int n, float shift) {
#ifdef ATLAS_X86
  if (g_use_avx2 && cpu_has_avx2()) return exp_shifted_sum_avx2(x, n, shift);
#endif
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - shift));
  return sum;
}

MatmulOut::MatmulOut(float* y_, const Weight& w_, int out_) : y(y_), w(w_.bytes().data()), dtype(w_.dtype()), out(out_) {}

namespace {
void matmul_any(ThreadPool& pool, float* y, const float* x, const void* w, DType t, int n, int in, int out) {
  const long long macs = static_cast<long long>(n) * in * out;
  if (macs < kParallelMacs || pool.size() == 1) {
    product_rows(y, x, w, t, n, in, out, 0, out);
    return;
  }
  pool.parallel_for(
      out, [&](int, int r0, int r1) { product_rows(y, x, w, t, n, in, out, r0, r1); }, kRowBlock);
}
}  // namespace

void matmul(ThreadPool& pool, float* y, const float* x, const float* w, int n, int in, int out) {
  matmul_any(pool, y, x, w, DType::f32, n, in, out);
}

void matmul(ThreadPool& pool, float* y, const float* x, const Weight& w, int n, int in, int out) {
  matmul_any(pool, y, x, w.bytes().data(), w.dtype(), n, in, out);
}

void matmul_serial(float* y, const float* x, const Weight& w, int n, int in, int out) {
  product_rows(y, x, w.bytes().data(), w.dtype(), n, in, out, 0, out);
}

void matmul_fused(ThreadPool& pool, const float* x, int n, int in, std::initializer_list<MatmulOut> products) {
  int total = 0;
  for (const auto& p : products) total += p.out;
  auto rows = [&](int, int r0, int r1) {
    // Global row range [r0, r1) -> the part of each product's rows it covers.
    int base = 0;
    for (const auto& p : products) {
      const int b = std::max(r0, base), e = std::min(r1, base + p.out);
      if (b < e) product_rows(p.y, x, p.w, p.dtype, n, in, p.out, b - base, e - base);
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
