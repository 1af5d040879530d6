// Kernel-level checks at production shapes (head_dim 128, K = 4096 / 12288, long contexts) that
// the tiny-model decoder tests do not reach. References in float64 on the host.
#ifdef ATLAS_HAVE_CUDA
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/attention.hpp"
#include "kernels/attention_decode_cluster.hpp"
#include "kernels/check.hpp"
#include "kernels/elementwise.hpp"
#include "kernels/flash_prefill.hpp"
#include "kernels/gemv.hpp"
#include "kernels/sampling.hpp"
#include "tests/gpu/gpu_test_util.hpp"

using namespace atlas;
using namespace atlas::kernels;
using atlas::test::gpu::round_bf16;

namespace {

template <typename T>
struct Dev {
  T* p = nullptr;
  explicit Dev(std::size_t n) { ATLAS_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T) + 16)); }
  ~Dev() { cudaFree(p); }
};

std::vector<std::uint16_t> to_bf16_bits(const std::vector<float>& v) {
  std::vector<std::uint16_t> o(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float r = round_bf16(v[i]);
    std::uint32_t u;
    std::memcpy(&u, &r, 4);
    o[i] = static_cast<std::uint16_t>(u >> 16);
  }
  return o;
}

}  // namespace

TEST_CASE("bf16 GEMV at 8B shapes: RMSNorm prologue with residual-add / SwiGLU epilogues; plain input") {
  ATLAS_REQUIRE_GPU();
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int k : {4096, 12288, 1000}) {
    const int rows = 518, ld = padded_ld(k);
    std::vector<float> w(static_cast<std::size_t>(rows) * ld, 0.0f), x(k), g(ld, 0.0f), y0(rows);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < k; ++c) w[static_cast<std::size_t>(r) * ld + c] = round_bf16(u(rng) / std::sqrt(k));
    for (auto& v : x) v = u(rng) * 3.0f;
    for (int c = 0; c < k; ++c) g[c] = 1.0f + 0.2f * u(rng);  // float32, not bf16-representable
    for (auto& v : y0) v = u(rng);
    auto wb = to_bf16_bits(w);
    Dev<std::uint16_t> dw(wb.size()), dh(rows / 2);
    Dev<float> dx(k), dy(rows), dg(g.size());  // the gain is float32 (kernels/gemv.hpp)
    ATLAS_CUDA_CHECK(cudaMemcpy(dw.p, wb.data(), wb.size() * 2, cudaMemcpyHostToDevice));
    ATLAS_CUDA_CHECK(cudaMemcpy(dg.p, g.data(), g.size() * 4, cudaMemcpyHostToDevice));
    ATLAS_CUDA_CHECK(cudaMemcpy(dx.p, x.data(), k * 4, cudaMemcpyHostToDevice));
    ATLAS_CUDA_CHECK(cudaMemcpy(dy.p, y0.data(), rows * 4, cudaMemcpyHostToDevice));
    gemv_prepare(ld);
    // Reference: normalise, round to bf16 (the kernel's staged input), dot in float64.
    double ss = 0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double inv = 1.0 / std::sqrt(ss / k + 1e-6);
    std::vector<double> xn(k);
    for (int c = 0; c < k; ++c) xn[c] = round_bf16(static_cast<float>(g[c] * (x[c] * inv)));
    std::vector<double> dot(rows);
    for (int r = 0; r < rows; ++r) {
      double a = 0;
      for (int c = 0; c < k; ++c) a += w[static_cast<std::size_t>(r) * ld + c] * xn[c];
      dot[r] = a;
    }
    gemv({ElemType::bf16, dw.p, rows, k, ld, GemvInput::rmsnorm, dx.p, dg.p, 1e-6f, GemvOutput::add, dy.p}, nullptr);
    std::vector<float> y(rows);
    ATLAS_CUDA_CHECK(cudaMemcpy(y.data(), dy.p, rows * 4, cudaMemcpyDeviceToHost));
    double err = 0;
    for (int r = 0; r < rows; ++r) err = std::max(err, std::abs(y[r] - (y0[r] + dot[r])));
    INFO("k = " << k);
    CHECK(err < 2e-3);
    gemv({ElemType::bf16, dw.p, rows, k, ld, GemvInput::rmsnorm, dx.p, dg.p, 1e-6f, GemvOutput::swiglu, dh.p}, nullptr);
    std::vector<std::uint16_t> h(rows / 2);
    ATLAS_CUDA_CHECK(cudaMemcpy(h.data(), dh.p, rows, cudaMemcpyDeviceToHost));
    double herr = 0;
    for (int i = 0; i < rows / 2; ++i) {
      const double gg = dot[2 * i], uu = dot[2 * i + 1];
      const double want = gg / (1 + std::exp(-gg)) * uu;
      std::uint32_t bits = static_cast<std::uint32_t>(h[i]) << 16;
      float got;
      std::memcpy(&got, &bits, 4);
      herr = std::max(herr, std::abs(got - want) / (std::abs(want) + 1e-2));
    }
    CHECK(herr < 1e-2);
    // Plain bf16 input (o_proj, down): staged in shared memory at 8 KiB and up (k = 4096,
    // 12288), read through L1 below (k = 1000); y = W x stored.
    std::vector<float> xp(ld, 0.0f);
    for (int c = 0; c < k; ++c) xp[c] = round_bf16(u(rng));
    auto xpb = to_bf16_bits(xp);
    Dev<std::uint16_t> dxp(xpb.size());
    ATLAS_CUDA_CHECK(cudaMemcpy(dxp.p, xpb.data(), xpb.size() * 2, cudaMemcpyHostToDevice));
    gemv({ElemType::bf16, dw.p, rows, k, ld, GemvInput::plain, dxp.p, nullptr, 0.0f, GemvOutput::store, dy.p}, nullptr);
    ATLAS_CUDA_CHECK(cudaMemcpy(y.data(), dy.p, rows * 4, cudaMemcpyDeviceToHost));
    double perr = 0;
    for (int r = 0; r < rows; ++r) {
      double a = 0;
      for (int c = 0; c < k; ++c) a += static_cast<double>(w[static_cast<std::size_t>(r) * ld + c]) * xp[c];
      perr = std::max(perr, std::abs(y[r] - a));
    }
    CHECK(perr < 1e-3);
  }
}

namespace {

struct AttnShape {
  ElemType wtype;
  int H, KV, d;
  bool qk_norm, interleaved;
};

enum class AttnKernel { split, cluster };

float bits_to_float(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Runs one decode-attention kernel at several positions (one slice, several, and more slices
/// than keys) against a float64 reference: the new K/V at pos from qkv (norm + RoPE, rounded to
/// the cache type), the rest from the cache. Returns nothing; CHECKs the max abs error.
void check_decode_attention(const AttnShape& sh, AttnKernel which) {
  const int H = sh.H, KV = sh.KV, d = sh.d, G = H / KV, max_seq = 5000;
  const bool bf = sh.wtype == ElemType::bf16;
  const std::size_t es = bf ? 2 : 4;
  std::mt19937 rng(9 + d + G);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto cast = [&](float v) { return bf ? round_bf16(v) : v; };
  const std::size_t cache_n = static_cast<std::size_t>(KV) * max_seq * d;
  Dev<float> dqkv((H + 2 * KV) * d), po(KV * 32 * G * d), pml(KV * 32 * G * 2);
  Dev<std::uint8_t> dk(cache_n * es), dv(cache_n * es), dout(H * d * es);
  Dev<float> qn(d), kn(d);  // q/k-norm gains: float32 (kernels/attention.hpp)
  Dev<int> tickets(KV), dpos(1), tok(1);
  Dev<float> emb(8), ex(8), rope(d);
  ATLAS_CUDA_CHECK(cudaMemset(tickets.p, 0, sizeof(int) * KV));
  ATLAS_CUDA_CHECK(cudaMemset(tok.p, 0, sizeof(int)));
  ATLAS_CUDA_CHECK(cudaMemset(emb.p, 0, sizeof(float) * 8));
  std::vector<float> kc(cache_n), vc(cache_n);
  for (auto& v : kc) v = cast(u(rng));
  for (auto& v : vc) v = cast(u(rng));
  auto upload = [&](void* dst, const std::vector<float>& v) {
    if (bf) {
      const auto b = to_bf16_bits(v);
      ATLAS_CUDA_CHECK(cudaMemcpy(dst, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
    } else {
      ATLAS_CUDA_CHECK(cudaMemcpy(dst, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
    }
  };
  auto restore_cache = [&] {
    upload(dk.p, kc);
    upload(dv.p, vc);
  };
  restore_cache();
  std::vector<float> qnorm(d), knorm(d);
  for (auto& v : qnorm) v = 1.0f + 0.1f * u(rng);
  for (auto& v : knorm) v = 1.0f + 0.1f * u(rng);
  ATLAS_CUDA_CHECK(cudaMemcpy(qn.p, qnorm.data(), d * 4, cudaMemcpyHostToDevice));
  ATLAS_CUDA_CHECK(cudaMemcpy(kn.p, knorm.data(), d * 4, cudaMemcpyHostToDevice));
  attention_decode_prepare(sh.wtype, G, d, 512);
  const double base = 1e6;
  for (int pos : {0, 1, 31, 63, 300, 2047, 4999}) {
    std::vector<float> qkv((H + 2 * KV) * d);
    for (auto& v : qkv) v = u(rng) * 2.0f;
    ATLAS_CUDA_CHECK(cudaMemcpy(dqkv.p, qkv.data(), qkv.size() * 4, cudaMemcpyHostToDevice));
    ATLAS_CUDA_CHECK(cudaMemcpy(dpos.p, &pos, 4, cudaMemcpyHostToDevice));
    int bucket = 256;
    while (bucket < pos + 1) bucket *= 2;
    std::vector<int> split_counts;
    if (which == AttnKernel::split) {
      split_counts.push_back(std::min(32, std::max(1, bucket / 32)));  // many partials to merge
      if (bucket <= 512) split_counts.push_back(1);                    // no merge
    } else {
      split_counts = {attention_decode_cluster_splits(sh.wtype, G, d, bucket), 1, 2};
    }
    for (const int splits : split_counts) {
      DecodeAttentionArgs a;
      a.wtype = sh.wtype;
      a.prep = {H, KV, d, sh.qk_norm ? qn.p : nullptr, sh.qk_norm ? kn.p : nullptr, 1e-6f, static_cast<float>(base),
                sh.interleaved};
      a.qkv = dqkv.p;
      a.k_cache = dk.p;
      a.v_cache = dv.p;
      a.max_seq = max_seq;
      a.pos = dpos.p;
      a.n_splits = splits;
      a.chunk_cap = bucket / splits;
      a.part_o = po.p;
      a.part_ml = pml.p;
      a.tickets = tickets.p;
      a.out = dout.p;
      auto read_out = [&] {
        ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<float> o(H * d);
        if (bf) {
          std::vector<std::uint16_t> ob(H * d);
          ATLAS_CUDA_CHECK(cudaMemcpy(ob.data(), dout.p, ob.size() * 2, cudaMemcpyDeviceToHost));
          for (int i = 0; i < H * d; ++i) o[i] = bits_to_float(ob[i]);
        } else {
          ATLAS_CUDA_CHECK(cudaMemcpy(o.data(), dout.p, o.size() * 4, cudaMemcpyDeviceToHost));
        }
        return o;
      };
      if (which == AttnKernel::split) attention_decode_split(a, nullptr);
      else attention_decode_cluster(a, nullptr);
      const std::vector<float> out = read_out();
      if (which == AttnKernel::cluster) {
        // The step's RoPE table from the embedding kernel must give the same bits as the
        // angles computed in the kernel.
        embed_token(ElemType::f32, emb.p, 8, 8, tok.p, ex.p, RopeTable{dpos.p, d, static_cast<float>(base), rope.p},
                    nullptr);
        a.rope_cs = rope.p;
        attention_decode_cluster(a, nullptr);
        const std::vector<float> with_table = read_out();
        INFO("pos " << pos << " splits " << splits);
        CHECK(std::memcmp(with_table.data(), out.data(), out.size() * sizeof(float)) == 0);
      }
      auto prep = [&](const float* src, const std::vector<float>& g) {
        std::vector<double> v(d), o(d);
        double ss = 0;
        for (int i = 0; i < d; ++i) ss += static_cast<double>(src[i]) * src[i];
        const double inv = sh.qk_norm ? 1.0 / std::sqrt(ss / d + 1e-6) : 1.0;
        for (int i = 0; i < d; ++i) v[i] = (sh.qk_norm ? g[i] : 1.0) * src[i] * inv;
        for (int i = 0; i < d / 2; ++i) {
          const double ang = pos * std::pow(base, -2.0 * i / d);
          const int ia = sh.interleaved ? 2 * i : i, ib = sh.interleaved ? 2 * i + 1 : i + d / 2;
          o[ia] = v[ia] * std::cos(ang) - v[ib] * std::sin(ang);
          o[ib] = v[ib] * std::cos(ang) + v[ia] * std::sin(ang);
        }
        return o;
      };
      // Excess error over what bf16 allows: the output is rounded to bf16 (relative 2^-9) and
      // the new key's rounding may differ by one ulp from the float64 reference's; anything
      // structural (a dropped slice, batch or key group) is far larger relative to |o|.
      const double rel = bf ? 1.0 / 256 : 0.0, abs_tol = bf ? 2e-4 : 1e-5;
      double err = 0, row_err = 0;
      auto read_row = [&](const void* cache, int gi) {  // row `pos` of KV head gi, as floats
        std::vector<float> r(d);
        const std::size_t at = (static_cast<std::size_t>(gi) * max_seq + pos) * d;
        if (bf) {
          std::vector<std::uint16_t> b(d);
          ATLAS_CUDA_CHECK(cudaMemcpy(b.data(), static_cast<const std::uint16_t*>(cache) + at, d * 2,
                                      cudaMemcpyDeviceToHost));
          for (int i = 0; i < d; ++i) r[i] = bits_to_float(b[i]);
        } else {
          ATLAS_CUDA_CHECK(cudaMemcpy(r.data(), static_cast<const float*>(cache) + at, d * 4, cudaMemcpyDeviceToHost));
        }
        return r;
      };
      for (int gi = 0; gi < KV; ++gi) {
        auto knew = prep(qkv.data() + H * d + gi * d, knorm);
        for (auto& v : knew) v = cast(static_cast<float>(v));
        std::vector<double> vnew(d);
        for (int i = 0; i < d; ++i) vnew[i] = cast(qkv[(H + KV) * d + gi * d + i]);
        // The row the kernel wrote into the cache: V exactly the input rounded; K within one
        // bf16 ulp (2^-7 relative) plus the float32 angle's error (pos * freq is rounded to
        // float on the device: ~1e-7 of pos radians), which a misplaced element far exceeds.
        const std::vector<float> krow = read_row(dk.p, gi), vrow = read_row(dv.p, gi);
        const double angle_tol = 1e-6 * pos + 1e-5;
        for (int i = 0; i < d; ++i) {
          row_err = std::max(row_err, std::abs(krow[i] - knew[i]) - (bf ? 1.0 / 128 : 0.0) * std::abs(knew[i]) - angle_tol);
          row_err = std::max(row_err, std::abs(static_cast<double>(vrow[i]) - vnew[i]));
        }
        for (int j = 0; j < G; ++j) {
          const int h = gi * G + j;
          auto q = prep(qkv.data() + h * d, qnorm);
          std::vector<double> s(pos + 1);
          double mx = -1e300;
          for (int t = 0; t <= pos; ++t) {
            double dot = 0;
            for (int i = 0; i < d; ++i)
              dot += q[i] * (t == pos ? knew[i] : kc[(static_cast<std::size_t>(gi) * max_seq + t) * d + i]);
            s[t] = dot / std::sqrt(static_cast<double>(d));
            mx = std::max(mx, s[t]);
          }
          double sum = 0;
          for (auto& e : s) sum += (e = std::exp(e - mx));
          for (int i = 0; i < d; ++i) {
            double o = 0;
            for (int t = 0; t <= pos; ++t)
              o += s[t] / sum * (t == pos ? vnew[i] : vc[(static_cast<std::size_t>(gi) * max_seq + t) * d + i]);
            err = std::max(err, std::abs(out[h * d + i] - o) - rel * std::abs(o));
          }
        }
      }
      INFO((which == AttnKernel::split ? "split-K" : "cluster") << " kernel, " << to_string(sh.wtype) << " d " << d
           << " G " << G << " pos " << pos << " splits " << splits);
      CHECK(err < abs_tol);
      CHECK(row_err <= 0.0);
      restore_cache();  // the row the kernel wrote, for the next position's reference
    }
  }
  int t = -1;
  ATLAS_CUDA_CHECK(cudaMemcpy(&t, tickets.p, 4, cudaMemcpyDeviceToHost));
  CHECK(t == 0);  // the split-K kernel's last block resets its ticket
}

}  // namespace

TEST_CASE("split-K decode attention (head_dim 128, GQA 4/8, qk-norm, half RoPE, f32/bf16) at long contexts; one slice") {
  ATLAS_REQUIRE_GPU();
  check_decode_attention({ElemType::f32, 8, 2, 128, true, false}, AttnKernel::split);
  check_decode_attention({ElemType::bf16, 16, 2, 128, true, false}, AttnKernel::split);
}

TEST_CASE("cluster decode attention matches float64 at long contexts: f32/bf16, head_dim 64/128/256, GQA 1-8 (odd 3)") {
  ATLAS_REQUIRE_GPU();
  if (!attention_decode_cluster_supported(ElemType::bf16, 4, 128)) {
    ATLAS_SKIP("the device has no thread-block clusters");
  }
  for (const AttnShape& sh :
       {AttnShape{ElemType::f32, 8, 2, 128, true, false}, AttnShape{ElemType::bf16, 16, 8, 128, true, false},
        AttnShape{ElemType::bf16, 32, 8, 128, true, false}, AttnShape{ElemType::bf16, 16, 2, 128, true, false},
        AttnShape{ElemType::bf16, 4, 4, 64, false, true}, AttnShape{ElemType::bf16, 8, 2, 256, true, false},
        AttnShape{ElemType::f32, 4, 2, 64, false, true}, AttnShape{ElemType::bf16, 6, 2, 128, true, false}}) {
    CAPTURE(sh.d);
    check_decode_attention(sh, AttnKernel::cluster);
  }
}

TEST_CASE("flash-attention prefill matches a float64 causal attention (GQA 4, after a cached prefix)") {
  ATLAS_REQUIRE_GPU();
  struct Case { int d, L, pos0; };
  for (const Case cs : {Case{128, 100, 37}, Case{64, 70, 0}, Case{128, 300, 0}, Case{128, 17, 200}}) {
    CAPTURE(cs.d);
    CAPTURE(cs.L);
    CAPTURE(cs.pos0);
    const int H = 8, KV = 2, G = H / KV, d = cs.d, L = cs.L, keys = cs.pos0 + cs.L, max_seq = keys + 5;
    const int out_ld = H * d + 8;  // padded rows, as the decoder's activations are
    std::mt19937 rng(11 + d + L);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> q(static_cast<std::size_t>(H) * L * d), kc(static_cast<std::size_t>(KV) * max_seq * d, 0.0f),
        vc(kc.size(), 0.0f);
    for (auto& v : q) v = round_bf16(2.0f * u(rng));  // scores of a few units: a peaked softmax too
    for (int g = 0; g < KV; ++g)
      for (int t = 0; t < keys; ++t)
        for (int i = 0; i < d; ++i) {
          const std::size_t at = (static_cast<std::size_t>(g) * max_seq + t) * d + i;
          kc[at] = round_bf16(u(rng));
          vc[at] = round_bf16(u(rng));
        }
    auto qb = to_bf16_bits(q), kb = to_bf16_bits(kc), vb = to_bf16_bits(vc);
    Dev<std::uint16_t> dq(qb.size()), dk(kb.size()), dv(vb.size()), dout(static_cast<std::size_t>(L) * out_ld);
    ATLAS_CUDA_CHECK(cudaMemcpy(dq.p, qb.data(), qb.size() * 2, cudaMemcpyHostToDevice));
    ATLAS_CUDA_CHECK(cudaMemcpy(dk.p, kb.data(), kb.size() * 2, cudaMemcpyHostToDevice));
    ATLAS_CUDA_CHECK(cudaMemcpy(dv.p, vb.data(), vb.size() * 2, cudaMemcpyHostToDevice));
    ATLAS_CUDA_CHECK(cudaMemset(dout.p, 0xff, static_cast<std::size_t>(L) * out_ld * 2));  // NaN where unwritten
    FlashPrefillArgs a;
    a.q = dq.p;
    a.q_head_stride = static_cast<long long>(L) * d;
    a.k_cache = dk.p;
    a.v_cache = dv.p;
    a.max_seq = max_seq;
    a.n_heads = H;
    a.n_kv_heads = KV;
    a.head_dim = d;
    a.n_query = L;
    a.pos0 = cs.pos0;
    a.scale = 1.0f / std::sqrt(static_cast<float>(d));
    a.out = dout.p;
    a.out_ld = out_ld;
    flash_attention_prefill(a, nullptr);
    ATLAS_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint16_t> ob(static_cast<std::size_t>(L) * out_ld);
    ATLAS_CUDA_CHECK(cudaMemcpy(ob.data(), dout.p, ob.size() * 2, cudaMemcpyDeviceToHost));
    double err = 0.0;
    for (int h = 0; h < H; ++h) {
      const int g = h / G;
      for (int i = 0; i < L; ++i) {
        const int visible = cs.pos0 + i + 1;
        std::vector<double> s(visible);
        double mx = -1e300;
        for (int t = 0; t < visible; ++t) {
          double dot = 0;
          for (int e = 0; e < d; ++e)
            dot += static_cast<double>(q[(static_cast<std::size_t>(h) * L + i) * d + e]) *
                   kc[(static_cast<std::size_t>(g) * max_seq + t) * d + e];
          s[t] = dot / std::sqrt(static_cast<double>(d));
          mx = std::max(mx, s[t]);
        }
        double sum = 0;
        for (auto& v : s) sum += (v = std::exp(v - mx));
        for (int e = 0; e < d; ++e) {
          double o = 0;
          for (int t = 0; t < visible; ++t) o += s[t] / sum * vc[(static_cast<std::size_t>(g) * max_seq + t) * d + e];
          const std::uint32_t bits = static_cast<std::uint32_t>(ob[static_cast<std::size_t>(i) * out_ld + h * d + e]) << 16;
          float got;
          std::memcpy(&got, &bits, 4);
          err = std::max(err, std::isnan(got) ? 1e9 : std::abs(got - o));
        }
      }
    }
    // bf16 P (relative 2^-9) and a bf16 output (2^-9 of |o| <= 1) bound the error near 4e-3.
    CHECK(err < 1e-2);
    MESSAGE("flash prefill d=" << d << " L=" << L << " pos0=" << cs.pos0 << ": max |error| vs float64 = " << err);
    // Columns outside the heads (row padding) are left alone.
    CHECK(ob[H * d] == 0xffff);
  }
}

TEST_CASE("device temperature sampling over a 151,936-token vocabulary never picks a token its logit rules out") {
  ATLAS_REQUIRE_GPU();
  // One token 60 logits above the rest at T = 1: every other token has probability < e^-60.
  // Infinite Gumbel noise (u rounded to 1) would let a random token win ~0.9% of draws.
  const int n = 151936, want = 4321;
  std::vector<float> v(n, 0.0f);
  v[want] = 60.0f;
  Dev<float> dv(n);
  Dev<int> out(1);
  Dev<DeviceSampling> params(1);
  Dev<unsigned char> scratch(argmax_scratch_bytes());
  ATLAS_CUDA_CHECK(cudaMemset(scratch.p, 0, argmax_scratch_bytes()));
  ATLAS_CUDA_CHECK(cudaMemcpy(dv.p, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
  int wrong = 0;
  for (int draw = 0; draw < 3000; ++draw) {
    const DeviceSampling p{1.0f, 0, 0x9e3779b97f4a7c15ull * (draw + 1)};
    ATLAS_CUDA_CHECK(cudaMemcpy(params.p, &p, sizeof p, cudaMemcpyHostToDevice));
    sample_token(dv.p, n, params.p, out.p, scratch.p, nullptr);
    int got = -1;
    ATLAS_CUDA_CHECK(cudaMemcpy(&got, out.p, 4, cudaMemcpyDeviceToHost));
    wrong += got != want;
  }
  CHECK(wrong == 0);
  // A tiny temperature is greedy, not an overflow (v / T would be inf for every logit).
  const DeviceSampling tiny{1e-30f, 0, 7};
  ATLAS_CUDA_CHECK(cudaMemcpy(params.p, &tiny, sizeof tiny, cudaMemcpyHostToDevice));
  sample_token(dv.p, n, params.p, out.p, scratch.p, nullptr);
  int got = -1;
  ATLAS_CUDA_CHECK(cudaMemcpy(&got, out.p, 4, cudaMemcpyDeviceToHost));
  CHECK(got == want);
}

TEST_CASE("device argmax: lowest index wins a tie") {
  ATLAS_REQUIRE_GPU();
  std::vector<float> v(151936, 0.5f);
  v[70000] = 2.0f;
  v[3000] = 2.0f;
  v[150000] = 2.0f;
  Dev<float> dv(v.size());
  Dev<int> out(1);
  Dev<unsigned char> scratch(argmax_scratch_bytes());
  ATLAS_CUDA_CHECK(cudaMemset(scratch.p, 0, argmax_scratch_bytes()));
  ATLAS_CUDA_CHECK(cudaMemcpy(dv.p, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 3; ++rep) {  // the ticket must reset between launches
    argmax(dv.p, static_cast<int>(v.size()), out.p, scratch.p, nullptr);
    int got = -1;
    ATLAS_CUDA_CHECK(cudaMemcpy(&got, out.p, 4, cudaMemcpyDeviceToHost));
    CHECK(got == 3000);
  }
  v[3000] = 1.0f;  // now 70000 and 150000 tie; 70000 is lower
  ATLAS_CUDA_CHECK(cudaMemcpy(dv.p, v.data(), v.size() * 4, cudaMemcpyHostToDevice));
  argmax(dv.p, static_cast<int>(v.size()), out.p, scratch.p, nullptr);
  int got = -1;
  ATLAS_CUDA_CHECK(cudaMemcpy(&got, out.p, 4, cudaMemcpyDeviceToHost));
  CHECK(got == 70000);
}
#endif  // ATLAS_HAVE_CUDA
