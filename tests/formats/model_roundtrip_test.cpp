// Presets, the GGUF writer (make-model) and load_model's dispatch.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/atomic_file.hpp"
#include "engine/backend.hpp"
#include "engine/error.hpp"
#include "engine/formats/gguf.hpp"
#include "engine/formats/gguf_writer.hpp"
#include "engine/formats/presets.hpp"
#include "tests/built_exe.hpp"
#include "tests/test_data.hpp"
#include "tests/typed_weights.hpp"
#include "tests/skip.hpp"

using namespace atlas::engine;

namespace {

/// Every weight span of a model, in a fixed order.
std::vector<std::span<const float>> all_weights(const Model& m) {
  std::vector<std::span<const float>> v = {m.weights.tok_embd, m.weights.output_norm, m.weights.output};
  for (const auto& L : m.weights.layers) {
    for (auto s : {L.attn_norm, L.wq, L.wk, L.wv, L.wo, L.q_norm, L.k_norm, L.ffn_norm, L.w_gate, L.w_up, L.w_down}) v.push_back(s);
  }
  return v;
}

bool same_config(const ModelConfig& a, const ModelConfig& b) {
  return a.arch == b.arch && a.name == b.name && a.dim == b.dim && a.hidden_dim == b.hidden_dim && a.n_layers == b.n_layers && a.n_heads == b.n_heads &&
         a.n_kv_heads == b.n_kv_heads && a.head_dim == b.head_dim && a.vocab_size == b.vocab_size && a.max_seq_len == b.max_seq_len &&
         a.rms_eps == b.rms_eps && a.rope_theta == b.rope_theta && a.rope_layout == b.rope_layout && a.tied_embeddings == b.tied_embeddings &&
         a.qk_norm == b.qk_norm;
}

}  // namespace

TEST_CASE("presets carry the real Hugging Face dimensions") {
  const ModelConfig& q06 = find_preset("qwen3-0.6b").config;
  CHECK(q06.dim == 1024);
  CHECK(q06.hidden_dim == 3072);
  CHECK(q06.n_layers == 28);
  CHECK(q06.n_heads == 16);
  CHECK(q06.n_kv_heads == 8);
  CHECK(q06.head_dim == 128);
  CHECK(q06.vocab_size == 151936);
  CHECK(q06.tied_embeddings);
  CHECK(q06.qk_norm);
  CHECK(q06.rope_layout == RopeLayout::half);
  const ModelConfig& q8 = find_preset("qwen3-8b").config;
  CHECK(q8.dim == 4096);
  CHECK(q8.hidden_dim == 12288);
  CHECK(q8.n_layers == 36);
  CHECK(q8.n_heads == 32);
  CHECK(q8.n_kv_heads == 8);
  CHECK_FALSE(q8.tied_embeddings);
  CHECK(q8.rope_theta == 1000000.0f);
  const ModelConfig& l8 = find_preset("llama-3.1-8b").config;
  CHECK(l8.hidden_dim == 14336);
  CHECK(l8.n_layers == 32);
  CHECK(l8.vocab_size == 128256);
  CHECK(l8.rope_theta == 500000.0f);
  const ModelConfig& s110 = find_preset("stories110m").config;
  CHECK(s110.dim == 768);
  CHECK(s110.hidden_dim == 2048);
  CHECK(s110.n_layers == 12);
  CHECK(s110.n_heads == 12);
  CHECK(s110.vocab_size == 32000);
  CHECK(s110.max_seq_len == 1024);
  CHECK_THROWS_WITH_AS(find_preset("gpt-5"), doctest::Contains("preset 'gpt-5' is unknown (known: tiny-llama"), EngineError);
}

TEST_CASE("preset weights are deterministic for a seed and scaled by fan-in") {
  const Model a = make_preset_model("tiny-qwen3", 42);
  const Model b = make_preset_model("tiny-qwen3", 42);
  const Model c = make_preset_model("tiny-qwen3", 43);
  const auto wa = all_weights(a), wb = all_weights(b), wc = all_weights(c);
  REQUIRE(wa.size() == wb.size());
  for (std::size_t i = 0; i < wa.size(); ++i) {
    CHECK((wa[i].empty() || std::memcmp(wa[i].data(), wb[i].data(), wa[i].size_bytes()) == 0));
    if (!wa[i].empty()) CHECK(std::memcmp(wa[i].data(), wc[i].data(), wa[i].size_bytes()) != 0);
  }
  REQUIRE(a.tokenizer != nullptr);  // byte-level: one id per byte, no stop ids
  CHECK(a.tokenizer->encode("Hi\n", true) == std::vector<int>{1, 'H' + 3, 'i' + 3, '\n' + 3});
  CHECK(a.tokenizer->vocab_size() == 512);
  CHECK(a.tokenizer->stop_ids().empty());
  CHECK(a.tokenizer->token_bytes(-1, 'x' + 3) == "x");
  CHECK(a.tokenizer->token_bytes(-1, 400).empty());
  CHECK(a.source.format == "preset");
  CHECK(a.source.seed == 42);
  CHECK(a.weights.output.data() == a.weights.tok_embd.data());  // tied
  // Matrices lie in [-1/sqrt(fan_in), 1/sqrt(fan_in)]; RMSNorm weights in [0.9, 1.1].
  float max_q = 0, min_norm = 2, max_norm = 0;
  for (float x : a.weights.layers[0].wq) max_q = std::max(max_q, std::fabs(x));
  for (float x : a.weights.layers[0].attn_norm) min_norm = std::min(min_norm, x), max_norm = std::max(max_norm, x);
  CHECK(max_q <= 1.0f / 8.0f);     // fan_in = dim = 64
  CHECK(max_q > 0.9f / 8.0f);      // and uses most of the range
  CHECK(min_norm >= 0.9f);
  CHECK(max_norm <= 1.1f);
  CHECK(a.weights.layers[0].q_norm.size() == 32);
  CHECK(make_preset_model("tiny-llama", 1, 64).config.max_seq_len == 64);
}

TEST_CASE("make-model GGUF round trip: F32 weights come back bit-identical") {
  for (const char* name : {"tiny-llama", "tiny-qwen3"}) {
    CAPTURE(name);
    const auto dir = atlas::test::scratch_dir(std::string("roundtrip-") + name);
    const Model m = make_preset_model(name, 7);
    write_gguf(dir / "a.gguf", m);
    write_gguf(dir / "b.gguf", make_preset_model(name, 7));
    write_gguf(dir / "c.gguf", make_preset_model(name, 8));
    CHECK(atlas::read_file(dir / "a.gguf") == atlas::read_file(dir / "b.gguf"));
    CHECK(atlas::read_file(dir / "a.gguf") != atlas::read_file(dir / "c.gguf"));
    const Model r = load_model(dir / "a.gguf");
    CHECK(same_config(r.config, m.config));
    const auto wm = all_weights(m), wr = all_weights(r);
    REQUIRE(wm.size() == wr.size());
    for (std::size_t i = 0; i < wm.size(); ++i) {
      REQUIRE(wm[i].size() == wr[i].size());
      // memcmp of an empty span passes a null pointer (UB, caught by make test-sanitize).
      CHECK((wm[i].empty() || std::memcmp(wm[i].data(), wr[i].data(), wm[i].size_bytes()) == 0));
    }
    CHECK(r.weights.output.data() == r.weights.tok_embd.data());
    REQUIRE(r.tokenizer != nullptr);
    CHECK(r.tokenizer->encode("ab", false) == m.tokenizer->encode("ab", false));
    CHECK(r.source.metadata.at("atlas.preset") == name);
    CHECK(r.source.metadata.at("general.architecture") == (m.config.arch == Arch::llama ? "llama" : "qwen3"));
    const GgufFile f = read_gguf(dir / "a.gguf");
    CHECK(f.get_string("atlas.preset") == name);
    CHECK(f.get_uint("atlas.seed") == 7);
  }
}

TEST_CASE("make-model GGUF round trip in F16, BF16 and Q8_0") {
  const Model m = make_preset_model("tiny-qwen3", 3);
  const auto dir = atlas::test::scratch_dir("roundtrip-dtypes");
  for (DType t : {DType::f16, DType::bf16, DType::q8_0}) {
    CAPTURE(to_string(t));
    const auto path = dir / (std::string(to_string(t)) + ".gguf");
    GgufWriteOptions w;
    w.dtype = t;
    write_gguf(path, m, w);
    const Model r = load_model(path);
    CHECK(same_config(r.config, m.config));
    const auto& a = m.weights.layers[1].w_down;
    const auto& b = r.weights.layers[1].w_down;
    REQUIRE(a.size() == b.size());
    float max_err = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (t == DType::f16) REQUIRE(b[i] == f16_to_f32(f32_to_f16(a[i])));
      if (t == DType::bf16) REQUIRE(b[i] == bf16_to_f32(f32_to_bf16(a[i])));
      max_err = std::max(max_err, std::fabs(a[i] - b[i]));
    }
    // Q8_0: |error| <= d/2 (rounding of q) + 127 x (F16 rounding of d) < 0.6 d, d = amax/127, amax <= 1/sqrt(192)
    CHECK(max_err <= (1.0f / std::sqrt(192.0f)) / 127.0f * 0.6f);
    // RMSNorm weights stay F32
    CHECK(std::memcmp(r.weights.layers[1].ffn_norm.data(), m.weights.layers[1].ffn_norm.data(), 64 * 4) == 0);
  }
  // tiny-llama's FFN rows (172) are no whole number of Q8_0 blocks
  GgufWriteOptions q8;
  q8.dtype = DType::q8_0;
  CHECK_THROWS_WITH_AS(write_gguf(dir / "x.gguf", make_preset_model("tiny-llama", 1), q8),
                       doctest::Contains("blk.0.ffn_down.weight row length 172 is not a multiple of 32"), EngineError);
  CHECK_FALSE(std::filesystem::exists(dir / "x.gguf"));
}

TEST_CASE("load_model: preset specs and missing paths") {
  const Model p = load_model("preset:tiny-llama@5");
  CHECK(p.source.format == "preset");
  CHECK(p.source.preset == "tiny-llama");
  CHECK(p.source.seed == 5);
  CHECK(p.config.dim == 64);
  CHECK(std::memcmp(p.weights.layers[2].wv.data(), make_preset_model("tiny-llama", 5).weights.layers[2].wv.data(), 2048 * 4) == 0);
  CHECK(load_model("preset:tiny-qwen3").source.seed == 0);
  LoadOptions o;
  o.max_seq_len = 100;
  CHECK(load_model("preset:tiny-qwen3@1", o).config.max_seq_len == 100);
  CHECK_THROWS_WITH_AS(load_model("preset:tiny-llama@x1"), doctest::Contains("seed 'x1' is not a non-negative integer"), EngineError);
  CHECK_THROWS_WITH_AS(load_model("preset:nope"), doctest::Contains("preset 'nope' is unknown"), EngineError);
  CHECK_THROWS_WITH_AS(load_model("/no/such/model.gguf"), doctest::Contains("/no/such/model.gguf: no such model file or directory"), EngineError);
  const auto dir = atlas::test::scratch_dir("load-model-dir");
  CHECK_THROWS_WITH_AS(load_model(dir), doctest::Contains("needs config.json"), EngineError);
}

TEST_CASE("atlas-bench make-model writes byte-identical files for a seed") {
  const std::string exe = atlas::test::bench_exe_or_skip();
  if (exe.empty()) return;
  const auto dir = atlas::test::scratch_dir("make-model-cli");
  const std::string base = std::string(exe) + " make-model --preset tiny-qwen3 --seed 11 --dtype bf16 --out ";
  REQUIRE(std::system((base + (dir / "a.gguf").string() + " > /dev/null").c_str()) == 0);
  REQUIRE(std::system((base + (dir / "b.gguf").string() + " > /dev/null").c_str()) == 0);
  CHECK(atlas::read_file(dir / "a.gguf") == atlas::read_file(dir / "b.gguf"));
  const Model r = load_model(dir / "a.gguf");
  CHECK(r.config.name == "tiny-qwen3");
  CHECK(r.weights.layers[0].wq[5] == bf16_to_f32(f32_to_bf16(make_preset_model("tiny-qwen3", 11).weights.layers[0].wq[5])));
  CHECK(WEXITSTATUS(std::system((std::string(exe) + " make-model --arch llama --preset tiny-qwen3 --out " + (dir / "c.gguf").string() + " 2> /dev/null").c_str())) == 3);
}

TEST_CASE("typed weights: BF16 / F16 / Q8_0 matrices stay in the file mapping and compute exactly as their float32 values") {
  const Model m = make_preset_model("tiny-qwen3", 3);
  const auto dir = atlas::test::scratch_dir("typed-weights");
  for (DType t : {DType::bf16, DType::f16, DType::q8_0}) {
    CAPTURE(to_string(t));
    const auto path = dir / (std::string(to_string(t)) + ".gguf");
    GgufWriteOptions w;
    w.dtype = t;
    write_gguf(path, m, w);
    const Model typed = load_model(path);
    // Matrices keep the file's storage, pointing into the mapping; vectors become float32.
    const Weight& wq = typed.weights.layers[0].wq;
    CHECK(wq.dtype() == t);
    CHECK(typed.weights.tok_embd.dtype() == t);
    CHECK(typed.weights.layers[0].attn_norm.dtype() == DType::f32);
    CHECK_THROWS_WITH_AS((void)wq.data(), doctest::Contains("read as float32"), EngineError);
    const GgufFile f = read_gguf(path);
    const auto info = std::find_if(f.tensors.begin(), f.tensors.end(), [](const GgufTensorInfo& i) { return i.name == "blk.0.attn_q.weight"; });
    REQUIRE(info != f.tensors.end());
    const auto file_bytes = f.tensor_data(*info);
    REQUIRE(wq.bytes().size() == file_bytes.size());  // 2 bytes an element (Q8_0: 34 per 32): no float32 copy
    CHECK(std::memcmp(wq.bytes().data(), file_bytes.data(), file_bytes.size()) == 0);
    // The typed matmul widens bf16 / f16 exactly and sums in the same order: identical logits to
    // the model widened to float32 up front (the old loader), with the AVX2 kernels and with the
    // portable ones.
    atlas::test::check_same_logits(typed, atlas::test::widened(typed), {1, 7, 300, 42, 5, 9, 77}, 1);
  }
}
