// The CPU backend's building blocks against hand-computed values and naive loops, and the whole
// forward pass (llama and qwen3) against an independent float64 reference.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <cmath>
#include <random>
#include <vector>

#include "engine/backend.hpp"
#include "engine/cpu/matmul.hpp"
#include "engine/cpu/ops.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "engine/error.hpp"
#include "tests/engine/random_model.hpp"
#include "tests/sanitized.hpp"
#include "tests/skip.hpp"

using namespace atlas::engine;
using doctest::Approx;

TEST_CASE("rope: interleaved layout rotates pairs (2i, 2i+1)") {
  float head[4] = {1, 2, 3, 4};
  cpu::rope(head, /*pos=*/1, /*head_dim=*/4, 10000.0f, RopeLayout::interleaved);
  // pair 0: angle 1 rad; pair 1: angle 10000^(-2/4) = 0.01 rad
  CHECK(head[0] == Approx(-1.1426396637).epsilon(1e-6));
  CHECK(head[1] == Approx(1.9220755965).epsilon(1e-6));
  CHECK(head[2] == Approx(2.9598506679).epsilon(1e-6));
  CHECK(head[3] == Approx(4.0297995017).epsilon(1e-6));
}

TEST_CASE("rope: half layout rotates pairs (i, i + d/2)") {
  float head[4] = {1, 2, 3, 4};
  cpu::rope(head, 1, 4, 10000.0f, RopeLayout::half);
  CHECK(head[0] == Approx(-1.9841106486).epsilon(1e-6));  // pair (0, 2), angle 1
  CHECK(head[1] == Approx(1.9599006675).epsilon(1e-6));   // pair (1, 3), angle 0.01
  CHECK(head[2] == Approx(2.4623779024).epsilon(1e-6));
  CHECK(head[3] == Approx(4.0197996683).epsilon(1e-6));
}

TEST_CASE("rope: position 0 is the identity") {
  float head[6] = {1, -2, 3, -4, 5, -6};
  cpu::rope(head, 0, 6, 10000.0f, RopeLayout::half);
  CHECK(head[0] == 1.0f);
  CHECK(head[3] == -4.0f);
  CHECK(head[5] == -6.0f);
}

TEST_CASE("rmsnorm and softmax match hand-computed values") {
  const float x[4] = {1, 2, 3, 4}, w[4] = {1, 0.5f, 2, 1};
  float o[4];
  cpu::rmsnorm(o, x, w, 4, 1e-5f);
  CHECK(o[0] == Approx(0.3651481282).epsilon(1e-6));
  CHECK(o[2] == Approx(2.1908887694).epsilon(1e-6));
  CHECK(o[3] == Approx(1.4605925130).epsilon(1e-6));
  float s[3] = {1, 2, 3};
  cpu::softmax(s, 3);
  CHECK(s[0] == Approx(0.0900305732).epsilon(1e-6));
  CHECK(s[2] == Approx(0.6652409558).epsilon(1e-6));
}

TEST_CASE("matmul: batched blocked kernel equals naive loops for odd shapes and thread counts") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int variant = 0; variant < 4; ++variant) {
    const int threads = variant < 3 ? variant + 1 : 2;
    const bool avx2 = variant < 3;  // the last pass runs the portable kernels
    if (!cpu::set_matmul_avx2(avx2)) continue;
    cpu::ThreadPool pool(threads);
    for (auto [n, in, out] : {std::tuple{1, 13, 7}, {3, 64, 37}, {5, 131, 300}, {2, 1024, 129}}) {
      CAPTURE(threads);
      CAPTURE(avx2);
      CAPTURE(n);
      CAPTURE(in);
      CAPTURE(out);
      std::vector<float> w(static_cast<std::size_t>(in * out)), x(static_cast<std::size_t>(n * in)), y(static_cast<std::size_t>(n * out));
      for (auto& v : w) v = u(rng);
      for (auto& v : x) v = u(rng);
      cpu::matmul(pool, y.data(), x.data(), w.data(), n, in, out);
      for (int t = 0; t < n; ++t) {
        for (int o = 0; o < out; ++o) {
          double ref = 0;
          for (int i = 0; i < in; ++i) ref += static_cast<double>(w[static_cast<std::size_t>(o * in + i)]) * x[static_cast<std::size_t>(t * in + i)];
          REQUIRE(y[static_cast<std::size_t>(t * out + o)] == Approx(ref).epsilon(1e-4).scale(1.0));
        }
      }
    }
  }
  cpu::set_matmul_avx2(true);
}

TEST_CASE("thread pool: every index is visited once, chunks respect the grain") {
  cpu::ThreadPool pool(3);
  CHECK(pool.size() == 3);
  std::vector<std::atomic<int>> seen(100);
  std::atomic<int> misaligned{0};
  for (int rep = 0; rep < 50; ++rep) {
    pool.parallel_for(
        100,
        [&](int, int b, int e) {
          if (b % 16 != 0) ++misaligned;
          for (int i = b; i < e; ++i) ++seen[static_cast<std::size_t>(i)];
        },
        16);
  }
  for (auto& s : seen) CHECK(s.load() == 50);
  CHECK(misaligned.load() == 0);
}

TEST_CASE("thread pool: more threads than the process can create is a typed error, not a hang or an abort") {
  if (atlas::test::kSanitized) {
    ATLAS_SKIP("the address-space limit this test sets leaves ASan no room for its shadow memory");
  }
  // In a child process whose address space is capped 64 MiB above what it uses now, so thread
  // stacks (8 MiB each by default) run out after a few; alarm() turns a hang into a failure.
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(30);
    long pages = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    const rlim_t cap = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE)) + (64u << 20);
    const rlimit lim{cap, cap};
    if (pages <= 0 || ::setrlimit(RLIMIT_AS, &lim) != 0) ::_exit(12);
    try {
      cpu::ThreadPool pool(4096);
      ::_exit(10);  // all 4096 started: the limit did not bite
    } catch (const EngineError& e) {
      const std::string what = e.what();
      if (::write(fds[1], what.data(), what.size()) < 0) ::_exit(13);
      ::_exit(0);
    } catch (...) {
      ::_exit(11);
    }
  }
  ::close(fds[1]);
  std::string what;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) what.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CAPTURE(what);
  REQUIRE_MESSAGE(WIFEXITED(status), "the child died of signal " << WTERMSIG(status) << " (SIGABRT: std::terminate; SIGALRM: a hang)");
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(what.find("4096 threads asked for") != std::string::npos);
  CHECK(what.find("could be started") != std::string::npos);
  CHECK(what.find("ask for fewer threads") != std::string::npos);
}

namespace {
void check_against_reference(Arch arch, int threads) {
  const Model m = atlas::test::random_model(atlas::test::tiny_config(arch), 42);
  BackendOptions opts;
  opts.threads = threads;
  auto backend = make_backend(m, opts);
  const std::vector<int> tokens{1, 5, 9, 30, 2, 17, 8};
  // Prefill all at once, and token by token: both equal the reference at each length.
  const auto logits = backend->forward(tokens, 0);
  const auto ref = atlas::test::reference_logits(m, tokens);
  for (std::size_t i = 0; i < ref.size(); ++i) REQUIRE(logits[i] == Approx(ref[i]).epsilon(1e-4).scale(1.0));
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    const auto step = backend->forward(std::span<const int>(&tokens[t], 1), static_cast<int>(t));
    const auto ref_t = atlas::test::reference_logits(m, std::vector<int>(tokens.begin(), tokens.begin() + static_cast<long>(t) + 1));
    for (std::size_t i = 0; i < ref_t.size(); ++i) REQUIRE(step[i] == Approx(ref_t[i]).epsilon(1e-4).scale(1.0));
  }
}
}  // namespace

TEST_CASE("forward: llama (interleaved RoPE, GQA, untied head) equals the float64 reference") {
  check_against_reference(Arch::llama, 1);
  check_against_reference(Arch::llama, 2);
}

TEST_CASE("forward: qwen3 (q/k norm before half RoPE, head_dim != dim/n_heads) equals the float64 reference") {
  check_against_reference(Arch::qwen3, 1);
  check_against_reference(Arch::qwen3, 2);
}

TEST_CASE("backend: bad inputs throw EngineError naming the value") {
  const Model m = atlas::test::random_model(atlas::test::tiny_config(Arch::llama), 1);
  auto b = make_backend(m, {});
  const std::vector<int> bad{1, 40};
  CHECK_THROWS_WITH_AS(b->forward(bad, 0), doctest::Contains("token id 40"), EngineError);
  const std::vector<int> one{1};
  CHECK_THROWS_WITH_AS(b->forward(one, 32), doctest::Contains("exceed the context of 32"), EngineError);
  BackendOptions cuda;
  cuda.name = "cuda";
#ifndef ATLAS_HAVE_CUDA
  CHECK_THROWS_WITH_AS(make_backend(m, cuda), doctest::Contains("backend 'cuda': this build has no CUDA backend"), EngineError);
#endif
  BackendOptions other;
  other.name = "tpu";
  CHECK_THROWS_WITH_AS(make_backend(m, other), doctest::Contains("backend 'tpu' is unknown"), EngineError);
  Model broken = atlas::test::random_model(atlas::test::tiny_config(Arch::llama), 1);
  broken.weights.layers[1].wk = broken.weights.layers[1].wk.first(10);
  CHECK_THROWS_WITH_AS(make_backend(broken, {}), doctest::Contains("blk.1.attn_k has 10 values"), EngineError);
}

TEST_CASE("matmul_fused: equals separate matmuls, including products that split a row block") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  const int n = 3, in = 96;
  const int outs[3] = {40, 21, 300};
  std::vector<std::vector<float>> w(3), y(3), ref(3);
  std::vector<float> x(static_cast<std::size_t>(n * in));
  for (auto& v : x) v = u(rng);
  cpu::ThreadPool one(1), two(2);
  for (int i = 0; i < 3; ++i) {
    w[i].resize(static_cast<std::size_t>(outs[i] * in));
    for (auto& v : w[i]) v = u(rng);
    y[i].assign(static_cast<std::size_t>(n * outs[i]), 0.0f);
    ref[i] = y[i];
    cpu::matmul(one, ref[i].data(), x.data(), w[i].data(), n, in, outs[i]);
  }
  cpu::matmul_fused(two, x.data(), n, in,
                    {{y[0].data(), w[0].data(), outs[0]}, {y[1].data(), w[1].data(), outs[1]}, {y[2].data(), w[2].data(), outs[2]}});
  for (int i = 0; i < 3; ++i) CHECK(y[i] == ref[i]);
}

TEST_CASE("exp_shifted_sum: vector exp matches std::exp within float rounding") {
  std::vector<float> x;
  for (float v = -87.0f; v <= 10.0f; v += 0.37f) x.push_back(v);
  for (bool avx2 : {true, false}) {
    if (!cpu::set_matmul_avx2(avx2)) continue;
    CAPTURE(avx2);
    std::vector<float> y = x;
    const float shift = 2.5f;
    const float sum = cpu::exp_shifted_sum(y.data(), static_cast<int>(y.size()), shift);
    double ref_sum = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double ref = std::exp(static_cast<double>(x[i]) - shift);
      ref_sum += ref;
      REQUIRE(y[i] == Approx(ref).epsilon(1e-6));
    }
    CHECK(sum == Approx(ref_sum).epsilon(1e-6));
  }
  cpu::set_matmul_avx2(true);
}
