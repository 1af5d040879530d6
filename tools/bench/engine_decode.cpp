// CPU backend speed: decode and prefill tokens/s on stories260K (real weights) and on the
// "stories110m" preset (llama2.c stories110M's shape with random weights: dim 768, hidden 2048,
// 12 layers, 12 heads, vocab 32000), next to this machine's memory bandwidth (read and copy),
// which bounds decode.
//   ./build/tools/bench_engine_decode --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// Env: ATLAS_DATA_DIR (common/data_dir.hpp; docs/environment.md "The data directory").
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "common/data_dir.hpp"
#include "engine/backend.hpp"
#include "engine/cpu/matmul.hpp"
#include "engine/formats/llama2c.hpp"
#include "engine/formats/presets.hpp"
#include "tools/bench/bench_main.hpp"

namespace {

using namespace atlas::engine;

std::filesystem::path data_dir() { return atlas::resolve_data_dir(); }

const Model& stories260k() {
  static const Model m = load_llama2c(data_dir() / "models/stories260K/stories260K.bin",
                                      data_dir() / "models/stories260K/tok512.bin");
  return m;
}

/// llama2.c stories110M's shape (dim 768, hidden 2048, 12 layers, 12 heads, vocab 32000, tied)
/// with deterministic random weights (engine/formats/presets.hpp): speed depends on shapes only.
const Model& stories110m() {
  static const Model m = make_preset_model("stories110m", /*seed=*/1, /*max_seq_len=*/1024);
  return m;
}

/// Bytes of weights one decode step reads: every layer matrix and the lm_head (one embedding row
/// is negligible), plus norms.
double weight_bytes_per_token(const Model& m) {
  const auto& c = m.config;
  // Hybrid models: the parameters one token reads (routed experts only), less the embedding
  // table (one row is read) when the lm_head is separate.
  if (!c.is_dense()) return 4.0 * static_cast<double>(c.active_parameter_count() - (c.tied_embeddings ? 0LL : 1LL * c.vocab_size * c.dim));
  const double layer = 2.0 * c.dim + static_cast<double>(c.q_dim()) * c.dim * 2 + 2.0 * c.kv_dim() * c.dim + 3.0 * c.hidden_dim * c.dim;
  return 4.0 * (c.n_layers * layer + c.dim + static_cast<double>(c.vocab_size) * c.dim);
}

std::unique_ptr<Backend> backend_for(const Model& m, int threads) {
  BackendOptions o;
  o.threads = threads;
  return make_backend(m, o);
}

/// One decode step per iteration at positions 1..ctx (then back to 1): a short context, so
/// the weights dominate the bytes read.
void decode(benchmark::State& state, const Model& m, int ctx) {
  auto b = backend_for(m, static_cast<int>(state.range(0)));
  const int bos = 1;
  b->forward(std::span<const int>(&bos, 1), 0);
  b->save_checkpoint();  // hybrid models: the wrap back to position 1 resumes the recurrent state from here
  int pos = 1, token = 5;
  for (auto _ : state) {
    const auto logits = b->forward(std::span<const int>(&token, 1), pos);
    benchmark::DoNotOptimize(logits.data());
    pos = pos + 1 < ctx ? pos + 1 : 1;
  }
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["weight_GB/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * weight_bytes_per_token(m) / 1e9, benchmark::Counter::kIsRate);
}

/// One prefill of n tokens per iteration (from position 0).
void prefill(benchmark::State& state, const Model& m, int n) {
  auto b = backend_for(m, static_cast<int>(state.range(0)));
  std::vector<int> tokens(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) tokens[static_cast<std::size_t>(i)] = 3 + (i * 37) % (m.config.vocab_size - 3);
  for (auto _ : state) {
    const auto logits = b->forward(tokens, 0);
    benchmark::DoNotOptimize(logits.data());
  }
  state.counters["tok/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * n, benchmark::Counter::kIsRate);
}

/// The qwen3-next-tiny preset (anchors' qnext-tiny: 8 layers, 6 Gated DeltaNet + 2 gated
/// attention, 32 experts top-4 + shared, vocab 512): the hybrid block path on the CPU.
const Model& qwen3_next_tiny() {
  static const Model m = make_preset_model("qwen3-next-tiny", /*seed=*/17, /*max_seq_len=*/1024);
  return m;
}
void BM_Decode_qwen3_next_tiny(benchmark::State& s) { decode(s, qwen3_next_tiny(), 256); }
void BM_Prefill128_qwen3_next_tiny(benchmark::State& s) { prefill(s, qwen3_next_tiny(), 128); }

void BM_Decode_stories260K(benchmark::State& s) { decode(s, stories260k(), 256); }
void BM_Prefill256_stories260K(benchmark::State& s) { prefill(s, stories260k(), 256); }
void BM_Decode_stories110M(benchmark::State& s) { decode(s, stories110m(), 64); }
void BM_Prefill128_stories110M(benchmark::State& s) { prefill(s, stories110m(), 128); }

/// Read bandwidth: a dot product over a 256 MiB buffer (larger than any cache), the access
/// pattern of decode's matmuls.
void BM_MemoryRead(benchmark::State& state) {
  const std::size_t n = 64u << 20;  // floats
  std::vector<float> a(n, 1.0f);
  for (auto _ : state) {
    float s = atlas::engine::cpu::dot(a.data(), a.data(), static_cast<int>(n));
    benchmark::DoNotOptimize(s);
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * n * 4 / 1e9, benchmark::Counter::kIsRate);
}

/// Copy bandwidth (memcpy of 256 MiB), counted as bytes read + bytes written (STREAM convention).
void BM_MemoryCopy(benchmark::State& state) {
  const std::size_t bytes = 256u << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
  }
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * bytes / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_MemoryRead)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MemoryCopy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode_qwen3_next_tiny)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill128_qwen3_next_tiny)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode_stories260K)->Arg(1)->ArgName("threads")->UseRealTime();
BENCHMARK(BM_Prefill256_stories260K)->Arg(1)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Decode_stories110M)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Prefill128_stories110M)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

int main(int argc, char** argv) { return atlas::bench::benchmark_main(argc, argv, "bench_engine_decode"); }
