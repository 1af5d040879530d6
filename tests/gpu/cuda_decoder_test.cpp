// The CUDA decoder against a float64 reference forward pass on random tiny models (llama- and
// Qwen3-shaped), fp32 and bf16; graph replay against eager; re-capture per context bucket; vetoes.
#ifdef ATLAS_HAVE_CUDA
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

#include "engine/cuda/cuda_decoder.hpp"
#include "engine/error.hpp"
#include "tests/gpu/gpu_test_util.hpp"

using namespace atlas;
using namespace atlas::test::gpu;
using engine::cuda::CudaDecoder;
using engine::cuda::DecoderOptions;

namespace {

double max_abs_diff(std::span<const float> a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < b.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}
double rel_l2(std::span<const float> a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

/// Prefills `prompt`, then decodes `steps` tokens feeding back the reference's argmax (so both
/// see the same inputs), checking logits at every position against the reference.
void check_against_reference(const engine::ModelConfig& cfg, kernels::ElemType wtype, bool graphs, int prompt_len,
                             int steps, double tol, bool relative, int prefill_chunk = 0) {
  auto host = random_model(cfg, 1234);
  DecoderOptions o = decoder_options(wtype, cfg.max_seq_len, graphs);
  o.max_prefill_chunk = prefill_chunk;
  CudaDecoder dec(host.model, o);
  Reference ref(host.model, wtype == kernels::ElemType::bf16);
  std::vector<int> prompt(prompt_len);
  for (int i = 0; i < prompt_len; ++i) prompt[i] = (i * 37 + 11) % cfg.vocab_size;
  std::vector<double> want;
  for (int i = 0; i < prompt_len; ++i) want = ref.step(prompt[i], i);
  int got_tok = dec.run(prompt, 0, true);
  auto err = relative ? rel_l2(dec.logits(), want) : max_abs_diff(dec.logits(), want);
  INFO("prefill of " << prompt_len << " tokens");
  CHECK(err <= tol);
  int next = static_cast<int>(std::max_element(want.begin(), want.end()) - want.begin());
  if (!relative) CHECK(got_tok == next);
  for (int s = 0; s < steps; ++s) {
    const int pos = prompt_len + s;
    want = ref.step(next, pos);
    got_tok = dec.run(std::span<const int>(&next, 1), pos, true);
    err = relative ? rel_l2(dec.logits(), want) : max_abs_diff(dec.logits(), want);
    INFO("decode step " << s << " pos " << pos);
    REQUIRE(err <= tol);
    const int want_tok = static_cast<int>(std::max_element(want.begin(), want.end()) - want.begin());
    // The device argmax must be the argmax of the device's own logits.
    const auto lg = dec.logits();
    CHECK(got_tok == static_cast<int>(std::max_element(lg.begin(), lg.end()) - lg.begin()));
    next = want_tok;
  }
}

}  // namespace

TEST_CASE("cuda decoder fp32 matches the float64 reference: llama shape (interleaved RoPE, GQA 2)") {
  ATLAS_REQUIRE_GPU();
  check_against_reference(tiny_llama(), kernels::ElemType::f32, true, 9, 24, 1e-4, false);
}

TEST_CASE("cuda decoder fp32 matches the float64 reference: Qwen3 shape (qk-norm, half RoPE, GQA 4, untied)") {
  ATLAS_REQUIRE_GPU();
  check_against_reference(tiny_qwen3(), kernels::ElemType::f32, true, 13, 24, 1e-4, false);
}

TEST_CASE("cuda decoder fp32 across a context bucket boundary (prefill 250, decode to 270)") {
  ATLAS_REQUIRE_GPU();
  check_against_reference(tiny_qwen3(), kernels::ElemType::f32, true, 250, 20, 1e-4, false);
}

TEST_CASE("chunked prefill (chunks of 64 over a 250-token prompt) matches the reference") {
  ATLAS_REQUIRE_GPU();
  check_against_reference(tiny_qwen3(), kernels::ElemType::f32, true, 250, 4, 1e-4, false, 64);
  check_against_reference(tiny_llama(), kernels::ElemType::bf16, true, 200, 4, 1e-2, true, 48);
}

TEST_CASE("cuda decoder bf16 is within bf16 rounding of the reference (relative L2 <= 1e-2)") {
  ATLAS_REQUIRE_GPU();
  check_against_reference(tiny_qwen3(), kernels::ElemType::bf16, true, 13, 24, 1e-2, true);
  check_against_reference(tiny_llama(), kernels::ElemType::bf16, true, 9, 24, 1e-2, true);
}

TEST_CASE("graph replay and eager decode give bit-identical tokens and logits; counters") {
  ATLAS_REQUIRE_GPU();
  for (auto wtype : {kernels::ElemType::bf16, kernels::ElemType::f32}) {
    auto host = random_model(tiny_qwen3(), 99);
    DecoderOptions o = decoder_options(wtype, 640);
    CudaDecoder g(host.model, o);
    o.graphs = false;
    CudaDecoder e(host.model, o);
    std::vector<int> prompt = {1, 5, 9, 200, 3};
    int tg = g.run(prompt, 0, false), te = e.run(prompt, 0, false);
    CHECK(tg == te);
    g.reset_counters();
    e.reset_counters();
    const int steps = 300;  // crosses the 256 bucket: two captures
    for (int s = 0; s < steps; ++s) {
      const int pos = static_cast<int>(prompt.size()) + s;
      tg = g.run(std::span<const int>(&tg, 1), pos, true);
      std::vector<float> lg(g.logits().begin(), g.logits().end());
      te = e.run(std::span<const int>(&te, 1), pos, true);
      REQUIRE(tg == te);
      REQUIRE(std::memcmp(lg.data(), e.logits().data(), lg.size() * sizeof(float)) == 0);
    }
    const auto& cg = g.counters();
    CHECK(cg.decode_steps == steps);
    CHECK(cg.graph_launches == steps);
    CHECK(cg.graph_captures == 2);
    CHECK(cg.kernel_launches == 0);
    CHECK(cg.host_syncs == steps);
    CHECK(cg.h2d_copies == steps);
    CHECK(cg.d2h_copies == 2 * steps);  // token + the logits asked for here
    const auto& ce = e.counters();
    CHECK(ce.graph_launches == 0);
    CHECK(ce.eager_steps == steps);
    // Launches per eager step: as many as the step's launch tape recorded, and the same tape
    // (stage by stage) as the captured graph's.
    CHECK(ce.kernel_launches == static_cast<std::int64_t>(steps) * static_cast<std::int64_t>(e.step_kernel_stages().size()));
    CHECK(g.step_kernel_stages() == e.step_kernel_stages());
    // The launches the model's blocks make (dense: per layer qkv, attention, o_proj, gate/up, down).
    const std::vector<engine::Stage> expect = expected_decode_kernel_stages(host.model.config);
    CHECK(g.step_kernel_stages().size() == expect.size());
    CHECK(g.step_kernel_stages() == expect);
  }
}

TEST_CASE("a layer's veto turns decode eager and is reported") {
  ATLAS_REQUIRE_GPU();
  auto host = random_model(tiny_llama(), 7);
  DecoderOptions o = decoder_options(kernels::ElemType::f32, 64);
  o.veto_layer = 1;
  CudaDecoder dec(host.model, o);
  const auto v = dec.vetoes();
  REQUIRE(v.size() == 1);
  CHECK(v[0].layer == "blk.1.attention");
  CHECK(!dec.graphs_enabled());
  int t = dec.run(std::vector<int>{1, 2, 3}, 0, false);
  for (int s = 0; s < 5; ++s) t = dec.run(std::span<const int>(&t, 1), 3 + s, false);
  CHECK(dec.counters().graph_launches == 0);
  CHECK(dec.counters().eager_steps == 5);
}

TEST_CASE("context overflow and bad token ids are errors naming the value") {
  ATLAS_REQUIRE_GPU();
  auto host = random_model(tiny_llama(), 7);
  const DecoderOptions o = decoder_options(kernels::ElemType::f32, 16);
  CudaDecoder dec(host.model, o);
  std::vector<int> too_long(17, 1);
  CHECK_THROWS_WITH_AS(dec.run(too_long, 0, false), doctest::Contains("max_seq_len 16"), atlas::Error);
  std::vector<int> bad = {1, 512};
  CHECK_THROWS_WITH_AS(dec.run(bad, 0, false), doctest::Contains("token id 512"), atlas::Error);
}
#endif  // ATLAS_HAVE_CUDA

#ifdef ATLAS_HAVE_CUDA
TEST_CASE("device temperature sampling draws from softmax(logits / T); a seed fixes the draw; graph == eager") {
  ATLAS_REQUIRE_GPU();
  auto host = random_model(tiny_qwen3(), 31);
  DecoderOptions o = decoder_options(kernels::ElemType::f32, 64);
  CudaDecoder g(host.model, o);
  o.graphs = false;
  CudaDecoder e(host.model, o);
  std::vector<int> prompt = {2, 7, 1, 8};
  const int x = g.run(prompt, 0, false);
  CHECK(e.run(prompt, 0, false) == x);
  const int pos = static_cast<int>(prompt.size());
  g.run(std::span<const int>(&x, 1), pos, true);
  const std::vector<float> logits(g.logits().begin(), g.logits().end());
  // A temperature that leaves a few likely tokens: the top logit gap sets the scale.
  std::vector<float> sorted = logits;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  const double T = std::max(1e-3, static_cast<double>(sorted[0] - sorted[4]) / 2.0);
  std::vector<double> p(logits.size());
  double z = 0;
  for (std::size_t i = 0; i < p.size(); ++i) z += (p[i] = std::exp((logits[i] - sorted[0]) / T));
  for (auto& v : p) v /= z;
  const int N = 4000;
  std::vector<int> count(logits.size(), 0);
  for (int i = 0; i < N; ++i) {
    // Re-running the same position rewrites the same K/V: every draw sees the same logits.
    const int t = g.run(std::span<const int>(&x, 1), pos, false, {static_cast<float>(T), 1000u + i});
    REQUIRE(t >= 0);
    REQUIRE(t < static_cast<int>(logits.size()));
    ++count[t];
  }
  double rest_p = 0;
  int rest_n = 0, checked = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double expect = N * p[i];
    if (expect >= 20) {
      ++checked;
      INFO("token " << i << " p " << p[i] << " count " << count[i]);
      CHECK(std::abs(count[i] - expect) <= 5.0 * std::sqrt(expect * (1 - p[i])));  // 5 sigma
    } else {
      rest_p += p[i];
      rest_n += count[i];
    }
  }
  CHECK(checked >= 2);
  CHECK(std::abs(rest_n - N * rest_p) <= 5.0 * std::sqrt(N * rest_p * (1 - rest_p)) + 1.0);
  // Fixed seed: the same token, graph or eager, now or later.
  const engine::cuda::DeviceSample s{static_cast<float>(T), 77};
  const int a = g.run(std::span<const int>(&x, 1), pos, false, s);
  e.run(std::span<const int>(&x, 1), pos, false);
  CHECK(e.run(std::span<const int>(&x, 1), pos, false, s) == a);
  CHECK(g.run(std::span<const int>(&x, 1), pos, false, s) == a);
  // Temperature 0 after sampling is greedy again (the device parameters are rewritten).
  CHECK(g.run(std::span<const int>(&x, 1), pos, false) ==
        static_cast<int>(std::max_element(logits.begin(), logits.end()) - logits.begin()));
  CHECK_THROWS_WITH_AS(g.run(std::span<const int>(&x, 1), pos, false, {-1.0f, 0}),
                       doctest::Contains("temperature"), engine::EngineError);
  MESSAGE("device sampling: T = " << T << ", " << checked << " tokens checked against N p within 5 sigma");
}
#endif  // ATLAS_HAVE_CUDA
