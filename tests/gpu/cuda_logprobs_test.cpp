// Log-probabilities on the device (kernels/logprobs.hpp) against the host rule they reproduce
// (engine::raw_logprobs), in the decoder's step (graph == eager, still one D2H copy per token)
// and through the backend; and the CUDA prefill stopped between chunks (a client that left).
#ifdef ATLAS_HAVE_CUDA
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "engine/backend.hpp"
#include "engine/cuda/cuda_decoder.hpp"
#include "engine/error.hpp"
#include "engine/logprobs.hpp"
#include "engine/sampler.hpp"
#include "kernels/check.hpp"
#include "kernels/logprobs.hpp"
#include "tests/gpu/gpu_test_util.hpp"

using namespace atlas;
using namespace atlas::test::gpu;
using engine::cuda::CudaDecoder;
using engine::cuda::DecoderOptions;
using engine::cuda::DeviceSample;

namespace {

/// One float compared as raw_logprobs' value: NaN == NaN, -inf == -inf, else within tol.
bool same_lp(float got, float want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(static_cast<double>(got) - want) <= tol;
}

/// Device log-probabilities of `v` at `chosen` against raw_logprobs: the top ids exactly, values
/// within 1e-5 (both sum in double; the device adds per block, then across blocks).
void check_kernel(const std::vector<float>& v, int chosen, const char* what) {
  INFO(what);
  const int n = static_cast<int>(v.size());
  float* dv = nullptr;
  kernels::StepLogprobs* dout = nullptr;
  void* scratch = nullptr;
  ATLAS_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dv), v.size() * sizeof(float)));
  ATLAS_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&dout), sizeof(kernels::StepLogprobs)));
  ATLAS_CUDA_CHECK(cudaMalloc(&scratch, kernels::logprobs_scratch_bytes()));
  ATLAS_CUDA_CHECK(cudaMemset(scratch, 0, kernels::logprobs_scratch_bytes()));
  ATLAS_CUDA_CHECK(cudaMemcpy(dv, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  const engine::TokenLogprobs want = engine::raw_logprobs(v, chosen, engine::kMaxTopLogprobs);
  for (int rep = 0; rep < 3; ++rep) {  // the scratch's ticket must be reset by each launch
    kernels::StepLogprobs in;
    in.token = chosen;
    ATLAS_CUDA_CHECK(cudaMemcpy(dout, &in, sizeof in, cudaMemcpyHostToDevice));
    kernels::token_logprobs(dv, n, dout, scratch, nullptr);
    kernels::StepLogprobs got;
    ATLAS_CUDA_CHECK(cudaMemcpy(&got, dout, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(got.token == chosen);
    CHECK(same_lp(got.token_logprob, want.chosen.logprob, 1e-5));
    REQUIRE(got.n_top == static_cast<int>(want.top.size()));
    for (int i = 0; i < got.n_top; ++i) {
      INFO("rank " << i);
      CHECK(got.top_ids[i] == want.top[static_cast<std::size_t>(i)].id);
      CHECK(same_lp(got.top_logprobs[i], want.top[static_cast<std::size_t>(i)].logprob, 1e-5));
    }
  }
  cudaFree(dv);
  cudaFree(dout);
  cudaFree(scratch);
}

}  // namespace

TEST_CASE("device log-probabilities equal raw_logprobs: a 151,936 vocabulary, ties across blocks, NaN, -inf, a vocabulary under 20") {
  ATLAS_REQUIRE_GPU();
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  std::vector<float> v(151936);
  for (float& x : v) x = nd(rng);
  check_kernel(v, 777, "random logits, Qwen's vocabulary");
  // Equal maxima in different blocks and inside one: the lower id ranks first, as on the host.
  for (int id : {150000, 3, 70001, 70000, 9999, 10000}) v[static_cast<std::size_t>(id)] = 25.0f;
  check_kernel(v, 70001, "six tied maxima");
  std::vector<float> flat(4099, 1.5f);  // every entry tied: the top list is ids 0..19
  check_kernel(flat, 4000, "all equal");
  std::vector<float> small = {0.5f, -1.0f, 3.0f, 3.0f, -std::numeric_limits<float>::infinity(), 0.0f, 2.0f};
  check_kernel(small, 4, "7 entries, one -inf (fewer than 20 alternatives)");
  std::vector<float> with_nan = small;
  with_nan[1] = std::numeric_limits<float>::quiet_NaN();
  check_kernel(with_nan, 2, "a NaN logit: every log-probability NaN, the NaN ranked last");
  std::vector<float> all_neg_inf(300, -std::numeric_limits<float>::infinity());
  check_kernel(all_neg_inf, 0, "all -inf: no distribution");
  // A NaN in a block that is not the last one reaches the merge's NaN flag; a +inf logit makes
  // the maximum infinite (no distribution) and ranks first.
  std::vector<float> big_nan = v;
  big_nan[5000] = std::numeric_limits<float>::quiet_NaN();
  check_kernel(big_nan, 777, "a NaN in the second of 64 blocks");
  std::vector<float> big_inf = v;
  big_inf[90000] = std::numeric_limits<float>::infinity();
  check_kernel(big_inf, 90000, "a +inf logit");
  for (int n : {20, 21, 257}) {  // exactly the top list, one past it, one block plus one entry
    std::vector<float> w(static_cast<std::size_t>(n));
    for (float& x : w) x = nd(rng);
    check_kernel(w, n - 1, "a short vocabulary");
  }
}

TEST_CASE("decoder: log-probabilities in the step equal raw_logprobs of its logits; graph == eager; still one copy back per token") {
  ATLAS_REQUIRE_GPU();
  for (auto wtype : {kernels::ElemType::f32, kernels::ElemType::bf16}) {
    INFO("weights " << (wtype == kernels::ElemType::f32 ? "f32" : "bf16"));
    auto host = random_model(tiny_qwen3(), 31);
    DecoderOptions o = decoder_options(wtype, 640);
    CudaDecoder g(host.model, o);
    o.graphs = false;
    CudaDecoder e(host.model, o);
    const std::vector<int> prompt = {4, 8, 15, 16, 23, 42, 7};
    const DeviceSample lp{0.0f, 0, true};
    int tg = g.run(prompt, 0, true, lp), te = e.run(prompt, 0, true, lp);
    REQUIRE(tg == te);
    {  // the prefill's last position
      const auto want = engine::raw_logprobs(g.logits(), tg, engine::kMaxTopLogprobs);
      CHECK(same_lp(g.last_logprobs().token_logprob, want.chosen.logprob, 1e-5));
      CHECK(g.last_logprobs().top_ids[0] == want.top[0].id);
    }
    for (int s = 0; s < 40; ++s) {
      const int pos = static_cast<int>(prompt.size()) + s;
      tg = g.run(std::span<const int>(&tg, 1), pos, true, lp);
      const auto want = engine::raw_logprobs(g.logits(), tg, engine::kMaxTopLogprobs);
      const kernels::StepLogprobs got = g.last_logprobs();
      CHECK(got.token == tg);
      CHECK(same_lp(got.token_logprob, want.chosen.logprob, 1e-5));
      REQUIRE(got.n_top == engine::kMaxTopLogprobs);
      for (int i = 0; i < got.n_top; ++i) {
        CHECK(got.top_ids[i] == want.top[static_cast<std::size_t>(i)].id);
        CHECK(same_lp(got.top_logprobs[i], want.top[static_cast<std::size_t>(i)].logprob, 1e-5));
      }
      CHECK(got.top_ids[0] == tg);  // greedy: the chosen id is the most likely one
      te = e.run(std::span<const int>(&te, 1), pos, true, lp);
      REQUIRE(te == tg);
      CHECK(std::memcmp(&got, &e.last_logprobs(), sizeof got) == 0);  // graph == eager, bit for bit
    }
  }
}

TEST_CASE("decoder: a step with log-probabilities is one graph launch, one H2D, one D2H, one sync; one kernel more; its own graph") {
  ATLAS_REQUIRE_GPU();
  auto host = random_model(tiny_qwen3(), 32);
  CudaDecoder g(host.model, decoder_options(kernels::ElemType::bf16, 640));
  DecoderOptions eo = decoder_options(kernels::ElemType::bf16, 640, false);
  CudaDecoder e(host.model, eo);
  int t = g.run(std::vector<int>{1, 2, 3}, 0, false);
  int te = e.run(std::vector<int>{1, 2, 3}, 0, false);
  // Without log-probabilities: the step as it was (the GPU gate's counts do not move).
  te = e.run(std::span<const int>(&te, 1), 3, false);
  const std::size_t plain_kernels = e.step_kernel_stages().size();
  e.run(std::span<const int>(&te, 1), 4, false, {0.0f, 0, true});
  CHECK(e.step_kernel_stages().size() == plain_kernels + 1);
  CHECK(e.step_kernel_stages().back() == engine::Stage::sample);

  g.reset_counters();
  const int steps = 20;
  for (int s = 0; s < steps; ++s) t = g.run(std::span<const int>(&t, 1), 3 + s, false, {0.0f, 0, true});
  const auto& c = g.counters();
  CHECK(c.graph_launches == steps);
  CHECK(c.kernel_launches == 0);
  CHECK(c.host_syncs == steps);
  CHECK(c.h2d_copies == steps);
  CHECK(c.d2h_copies == steps);
  CHECK(c.d2h_bytes == static_cast<std::int64_t>(steps * sizeof(kernels::StepLogprobs)));
  CHECK(c.graph_captures == 1);
  // Back to plain steps in the same bucket: the plain graph, captured once more, 4 bytes back.
  g.reset_counters();
  for (int s = 0; s < steps; ++s) t = g.run(std::span<const int>(&t, 1), 3 + steps + s, false);
  CHECK(g.counters().graph_captures == 1);
  CHECK(g.counters().d2h_bytes == static_cast<std::int64_t>(steps * sizeof(int)));
}

TEST_CASE("backend: forward_sample_logprobs on CUDA equals raw_logprobs of the same step's logits, device and host samplers") {
  ATLAS_REQUIRE_GPU();
  auto host = random_model(tiny_qwen3(), 33);
  engine::BackendOptions bo;
  bo.name = "cuda";
  bo.fp32 = true;
  auto b = engine::make_backend(host.model, bo);
  REQUIRE(b->supports_logprobs());
  const std::vector<int> prompt = {9, 8, 7, 6};
  struct Case {
    const char* what;
    engine::SamplingParams p;
  };
  auto compare = [](const engine::TokenLogprobs& got, const engine::TokenLogprobs& want) {
    CHECK(got.chosen.id == want.chosen.id);
    CHECK(same_lp(got.chosen.logprob, want.chosen.logprob, 1e-5));
    REQUIRE(got.top.size() == want.top.size());
    for (std::size_t i = 0; i < got.top.size(); ++i) {
      CHECK(got.top[i].id == want.top[i].id);
      CHECK(same_lp(got.top[i].logprob, want.top[i].logprob, 1e-5));
    }
  };
  for (const Case& k : {Case{"greedy (device)", {}}, Case{"temperature 2 (device)", {2.0f, 0, 1.0f, 5}},
                        Case{"top-p 0.9 (host)", {2.0f, 0, 0.9f, 5}}}) {
    INFO(k.what);
    engine::Sampler sampler(k.p);
    engine::TokenLogprobs got;
    int t = b->forward_sample_logprobs(prompt, 0, sampler, 5, got);
    // The same positions again: a dense model's step is a pure function of its inputs and KV prefix.
    compare(got, engine::raw_logprobs(b->forward(prompt, 0), t, 5));
    int not_argmax = got.chosen.id != got.top[0].id;
    for (int s = 0; s < 12; ++s) {
      const int pos = static_cast<int>(prompt.size()) + s;
      const int in = t;
      t = b->forward_sample_logprobs(std::span<const int>(&in, 1), pos, sampler, 5, got);
      compare(got, engine::raw_logprobs(b->forward(std::span<const int>(&in, 1), pos), t, 5));
      not_argmax += got.chosen.id != got.top[0].id;
    }
    // At T = 2 over a random model's nearly flat 1,000-token distribution a draw is the argmax
    // with probability ~1e-3, so the chosen id's log-probability is read for other ids too.
    if (!k.p.greedy()) CHECK(not_argmax > 0);
    else CHECK(not_argmax == 0);
  }
  engine::Sampler sampler({});
  engine::TokenLogprobs got;
  CHECK_THROWS_AS(b->forward_sample_logprobs(prompt, 0, sampler, engine::kMaxTopLogprobs + 1, got), engine::EngineError);
}

TEST_CASE("backend: a prefill whose caller left stops at the next chunk boundary on CUDA (Backend::begin_prefill)") {
  ATLAS_REQUIRE_GPU();
  engine::ModelConfig c = tiny_qwen3();
  c.max_seq_len = 4400;  // a prompt of two 4,096-token chunks (the flash prefill's chunk)
  auto host = random_model(c, 35);
  engine::BackendOptions bo;
  bo.name = "cuda";
  auto b = engine::make_backend(host.model, bo);
  std::vector<int> prompt(4200);
  for (int i = 0; i < 4200; ++i) prompt[static_cast<std::size_t>(i)] = (i * 7 + 1) % c.vocab_size;
  int asked = 0;
  b->begin_prefill([&] { ++asked; return false; });  // watched, never stopped: asked between the chunks
  b->forward(prompt, 0);
  b->end_prefill();
  const int boundaries = asked;
  CHECK(boundaries >= 1);
  asked = 0;
  b->begin_prefill([&] { ++asked; return true; });
  CHECK_THROWS_AS(b->forward(prompt, 0), engine::GenerationCancelled);
  b->end_prefill();
  CHECK(asked == 1);  // stopped at the first boundary
  MESSAGE("a 4,200-token prompt: " << boundaries << " chunk boundaries asked");
  // Nobody watching: the whole prompt runs, and the result equals a fresh backend's.
  const auto lg = b->forward(prompt, 0);
  const std::vector<float> after(lg.begin(), lg.end());
  auto fresh = engine::make_backend(host.model, bo);
  const auto want = fresh->forward(prompt, 0);
  CHECK(std::memcmp(after.data(), want.data(), want.size() * sizeof(float)) == 0);
}

TEST_CASE("decoder: a prefill stopped between chunks stops there; the hook sees each chunk; a later cold run is unaffected") {
  ATLAS_REQUIRE_GPU();
  auto host = random_model(tiny_qwen3(), 34);
  DecoderOptions o = decoder_options(kernels::ElemType::f32, 640);
  o.max_prefill_chunk = 64;
  std::vector<int> prompt(250);
  for (int i = 0; i < 250; ++i) prompt[static_cast<std::size_t>(i)] = (i * 13 + 5) % 1000;

  CudaDecoder ref(host.model, o);
  ref.run(prompt, 0, true);
  const std::vector<float> want(ref.logits().begin(), ref.logits().end());

  CHECK(ref.counters().host_syncs == 1);  // unwatched: the prefill's one sync at its end

  CudaDecoder dec(host.model, o);
  std::vector<std::pair<int, bool>> seen;
  dec.set_prefill_chunk_hook([&](int n, bool more) { seen.emplace_back(n, more); });
  dec.run(prompt, 0, true);
  CHECK(seen == std::vector<std::pair<int, bool>>{{64, true}, {64, true}, {64, true}, {58, false}});
  // Paced: before asking after chunks 1 and 2 the host waited for chunks 0 and 1.
  CHECK(dec.counters().host_syncs == 3);
  CHECK(std::memcmp(want.data(), dec.logits().data(), want.size() * sizeof(float)) == 0);  // pacing changes no bit

  seen.clear();
  dec.set_prefill_chunk_hook([&](int n, bool more) {
    seen.emplace_back(n, more);
    if (seen.size() == 2) throw engine::GenerationCancelled("client gone");
  });
  CHECK_THROWS_AS(dec.run(prompt, 0, true), engine::GenerationCancelled);
  CHECK(seen.size() == 2);
  dec.set_prefill_chunk_hook({});
  dec.run(prompt, 0, true);
  CHECK(std::memcmp(want.data(), dec.logits().data(), want.size() * sizeof(float)) == 0);
}

#endif  // ATLAS_HAVE_CUDA
