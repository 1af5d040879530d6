// The AVX2 decode kernels against float64 references, AVX2 and portable paths alike:
// attention (cpu::attention_simd, head_dim 8/16/32/64) over position counts that exercise the
// 8-position blocks, the remainder and the accumulator unrolling, with strided K/V rows as in
// GQA caches; the one-token matmul (8-row blocks, masked row tails) over stories260K-like shapes.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/cpu/matmul.hpp"
#include "engine/cpu/ops.hpp"
#include "engine/cpu/thread_pool.hpp"

using namespace atlas::engine;

namespace {

std::vector<double> reference(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int n_pos,
                              int hd, int stride) {
  std::vector<double> s(static_cast<std::size_t>(n_pos));
  double mx = -1e300;
  for (int t = 0; t < n_pos; ++t) {
    double d = 0;
    for (int i = 0; i < hd; ++i) d += static_cast<double>(q[i]) * k[static_cast<std::size_t>(t * stride + i)];
    s[t] = d / std::sqrt(static_cast<double>(hd));
    mx = std::max(mx, s[t]);
  }
  double sum = 0;
  for (auto& x : s) sum += (x = std::exp(x - mx));
  std::vector<double> out(static_cast<std::size_t>(hd), 0.0);
  for (int t = 0; t < n_pos; ++t)
    for (int i = 0; i < hd; ++i) out[i] += s[t] / sum * v[static_cast<std::size_t>(t * stride + i)];
  return out;
}

}  // namespace

TEST_CASE("attention: AVX2 kernel and portable path match a float64 reference") {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  for (int hd : {8, 16, 32, 64, 12}) {
    for (int n_pos : {1, 3, 7, 8, 9, 16, 17, 31, 64, 200, 511}) {
      const int stride = hd * 3;  // another KV head's values sit between two positions
      std::vector<float> q(static_cast<std::size_t>(hd)), k(static_cast<std::size_t>(n_pos * stride)), v(k.size());
      for (auto& x : q) x = nd(rng);
      for (auto& x : k) x = nd(rng);
      for (auto& x : v) x = nd(rng);
      const auto want = reference(q, k, v, n_pos, hd, stride);
      for (bool avx2 : {true, false}) {
        if (!cpu::set_matmul_avx2(avx2)) continue;
        std::vector<float> out(static_cast<std::size_t>(hd), -7.0f), scores(static_cast<std::size_t>(n_pos));
        cpu::attention(out.data(), q.data(), k.data(), v.data(), n_pos, hd, stride, scores.data());
        CAPTURE(hd);
        CAPTURE(n_pos);
        CAPTURE(avx2);
        for (int i = 0; i < hd; ++i) CHECK(out[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1.0));
      }
    }
  }
  cpu::set_matmul_avx2(true);
}

TEST_CASE("attention_simd: taken for head_dim 8/16/32/64 with AVX2, refused otherwise") {
  std::vector<float> q(64, 0.5f), k(64 * 4, 0.25f), v(64 * 4, 1.0f), out(64), scores(4);
  const bool have = cpu::set_matmul_avx2(true);
  for (int hd : {8, 16, 32, 64}) CHECK(cpu::attention_simd(out.data(), q.data(), k.data(), v.data(), 4, hd, 64, scores.data()) == have);
  CHECK_FALSE(cpu::attention_simd(out.data(), q.data(), k.data(), v.data(), 4, 12, 64, scores.data()));
  if (have) {
    for (int i = 0; i < 64; ++i) CHECK(out[i] == doctest::Approx(1.0f));  // equal scores: the mean of equal V rows
  }
  cpu::set_matmul_avx2(false);
  CHECK_FALSE(cpu::attention_simd(out.data(), q.data(), k.data(), v.data(), 4, 8, 64, scores.data()));
  cpu::set_matmul_avx2(true);
}

TEST_CASE("matmul, one token: 8-row blocks, 4-row and single-row remainders, row tails of 1-7 values") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> ud(-1.0f, 1.0f);
  cpu::ThreadPool pool(1);
  for (int in : {8, 16, 64, 172, 5, 13}) {
    for (int out : {8, 16, 37, 64, 172, 512, 3}) {
      std::vector<float> w(static_cast<std::size_t>(in * out)), x(static_cast<std::size_t>(in));
      for (auto& v : w) v = ud(rng);
      for (auto& v : x) v = ud(rng);
      for (bool avx2 : {true, false}) {
        if (!cpu::set_matmul_avx2(avx2)) continue;
        std::vector<float> y(static_cast<std::size_t>(out), 99.0f);
        cpu::matmul(pool, y.data(), x.data(), w.data(), 1, in, out);
        CAPTURE(in);
        CAPTURE(out);
        CAPTURE(avx2);
        for (int o = 0; o < out; ++o) {
          double want = 0;
          for (int i = 0; i < in; ++i) want += static_cast<double>(w[static_cast<std::size_t>(o * in + i)]) * x[i];
          CHECK(y[o] == doctest::Approx(want).epsilon(1e-5).scale(1.0));
        }
      }
    }
  }
  cpu::set_matmul_avx2(true);
}
