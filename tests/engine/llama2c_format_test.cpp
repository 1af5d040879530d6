// llama2.c checkpoints: the legacy stories260K file, ak42 version 1 (fp32) and version 2 (Q8_0)
// files written here from its weights, and mutated copies that must fail with clear errors.
#include <doctest/doctest.h>

#include <limits>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/error.hpp"
#include "engine/formats/llama2c.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {
std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {(std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()};
}
std::filesystem::path write(const std::filesystem::path& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir / name, std::ios::binary) << bytes;
  return dir / name;
}
template <class T>
void put(std::string& b, std::size_t off, T v) {
  std::memcpy(b.data() + off, &v, sizeof v);
}
void append_f32(std::string& out, std::span<const float> v) { out.append(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

/// Header of an ak42 file: magic, version, the 7 fields, the shared flag, [group size], padding.
std::string ak42_header(const ModelConfig& c, int version, bool shared, std::int32_t group_size = 0) {
  std::string h(256, '\0');
  put<std::uint32_t>(h, 0, 0x616b3432);
  put<std::int32_t>(h, 4, version);
  const std::int32_t fields[] = {c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, 512};
  for (int i = 0; i < 7; ++i) put(h, 8 + 4 * static_cast<std::size_t>(i), fields[i]);
  h[36] = shared ? 1 : 0;
  if (version == 2) put(h, 37, group_size);
  return h;
}

std::vector<float> logits_of(const Model& m, const std::vector<int>& tokens) {
  auto b = make_backend(m, {});
  const auto l = b->forward(tokens, 0);
  return {l.begin(), l.end()};
}

const std::vector<int> kPrompt{1, 403, 407, 261, 378};
}  // namespace

TEST_CASE("llama2c legacy: stories260K header and derived config") {
  const Model m = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  const auto& c = m.config;
  CHECK(c.arch == Arch::llama);
  CHECK(std::string(to_string(c.arch)) == "llama");
  CHECK(std::string(to_string(c.rope_layout)) == "interleaved");
  CHECK(c.name == "stories260K");
  CHECK(c.dim == 64);
  CHECK(c.hidden_dim == 172);
  CHECK(c.n_layers == 5);
  CHECK(c.n_heads == 8);
  CHECK(c.n_kv_heads == 4);
  CHECK(c.head_dim == 8);
  CHECK(c.kv_dim() == 32);
  CHECK(c.vocab_size == 512);
  CHECK(c.max_seq_len == 512);
  CHECK(c.tied_embeddings);
  CHECK(c.parameter_count() == 260032);  // SOURCE.md
  CHECK(m.weights.output.data() == m.weights.tok_embd.data());
  CHECK(m.source.format == "llama2c");
  // rms_att_weight starts at byte 131100 (SOURCE.md); wq of layer 1 at 132380 + 4096 * 4.
  const std::string bytes = read_all(atlas::test::stories_bin());
  float v;
  std::memcpy(&v, bytes.data() + 131100, 4);
  CHECK(m.weights.layers[0].attn_norm[0] == v);
  std::memcpy(&v, bytes.data() + 132380 + 4096 * 4, 4);
  CHECK(m.weights.layers[1].wq[0] == v);
  // The tokenizer is found beside the model when not given.
  const Model beside = load_llama2c(atlas::test::stories_bin());
  REQUIRE(beside.tokenizer);
  CHECK(beside.tokenizer->encode("Once upon a time", true) == kPrompt);
  LoadOptions opts;
  opts.max_seq_len = 128;
  CHECK(load_llama2c(atlas::test::stories_bin(), {}, opts).config.max_seq_len == 128);
  CHECK(looks_like_llama2c(atlas::test::stories_bin()));
  CHECK_FALSE(looks_like_llama2c(atlas::test::stories_tok()));
}

TEST_CASE("llama2c legacy: truncated and corrupted files give the documented errors") {
  const auto dir = atlas::test::scratch_dir("llama2c-corrupt");
  const std::string good = read_all(atlas::test::stories_bin());
  auto expect_error = [&](const std::string& name, const std::string& bytes, const std::string& message) {
    CAPTURE(name);
    const auto path = write(dir, name, bytes);
    CHECK_THROWS_WITH_AS(load_llama2c(path, atlas::test::stories_tok()), doctest::Contains((path.string() + ": " + message).c_str()),
                         EngineError);
  };
  expect_error("truncated.bin", good.substr(0, good.size() - 100),
               "file size is 1056440 bytes but the header (version 0, dim 64, hidden_dim 172, n_layers 5, n_heads 8, n_kv_heads 4, "
               "vocab_size 512, seq_len 512) implies 1056540 bytes");
  expect_error("tiny.bin", good.substr(0, 10), "file size is 10 bytes, smaller than the 28-byte llama2.c header");
  expect_error("empty.bin", "", "file size is 0 bytes");
  std::string b = good;
  put<std::int32_t>(b, 12, 0);
  expect_error("zero_heads.bin", b, "header field n_heads = 0 is invalid (must be in [1, 1024])");
  b = good;
  put<std::int32_t>(b, 0, -64);
  expect_error("negative_dim.bin", b, "header field dim = -64 is invalid");
  b = good;
  put<std::int32_t>(b, 12, 7);
  expect_error("bad_heads.bin", b, "header field n_heads = 7 does not divide dim = 64");
  b = good;
  put<std::int32_t>(b, 16, 3);
  expect_error("bad_kv_heads.bin", b, "header field n_kv_heads = 3 does not divide n_heads = 8");
  b = good;
  put<std::int32_t>(b, 20, -512);  // untied: a wcls array should follow, but the file ends
  expect_error("untied_missing_wcls.bin", b, "file size is 1056540 bytes but the header (version 0, dim 64, hidden_dim 172, n_layers 5, n_heads 8, n_kv_heads 4, vocab_size 512, seq_len 512) implies 1187612 bytes");
  b = good;
  put<std::int32_t>(b, 8, 2000000000);
  expect_error("huge_layers.bin", b, "header field n_layers = 2000000000 is invalid");
  b = good;
  put<std::int32_t>(b, 20, std::numeric_limits<std::int32_t>::min());  // found by fuzz_llama2c: -vocab_size overflowed
  expect_error("vocab_int_min.bin", b, "header field vocab_size = -2147483648 is invalid");
  // fuzz/make_seeds.py writes the replayed input (regress-vocab-int-min.bin, generated like every
  // model-file seed) as that header alone.
  expect_error("vocab_int_min_header.bin", b.substr(0, 28), "header field vocab_size = -2147483648 is invalid");
  CHECK_THROWS_WITH_AS(load_llama2c(dir / "absent.bin"), doctest::Contains("absent.bin: cannot open model file"), EngineError);
}

TEST_CASE("llama2c ak42 version 1 (fp32), tied and untied, gives the legacy file's logits") {
  const Model legacy = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  const auto& c = legacy.config;
  const auto& w = legacy.weights;
  auto body = [&](bool shared) {
    std::string out = ak42_header(c, 1, shared);
    for (const auto& l : w.layers) append_f32(out, l.attn_norm);
    for (const auto& l : w.layers) append_f32(out, l.ffn_norm);
    append_f32(out, w.output_norm);
    append_f32(out, w.tok_embd);
    for (auto m : {&LayerWeights::wq, &LayerWeights::wk, &LayerWeights::wv, &LayerWeights::wo, &LayerWeights::w_gate,
                   &LayerWeights::w_down, &LayerWeights::w_up}) {
      for (const auto& l : w.layers) append_f32(out, l.*m);
    }
    if (!shared) append_f32(out, w.output);
    return out;
  };
  const auto dir = atlas::test::scratch_dir("llama2c-v1");
  const auto expected = logits_of(legacy, kPrompt);
  for (bool shared : {true, false}) {
    CAPTURE(shared);
    const Model m = load_llama2c(write(dir, shared ? "tied.bin" : "untied.bin", body(shared)), atlas::test::stories_tok());
    CHECK(m.config.tied_embeddings == shared);
    CHECK(m.source.metadata.at("llama2c.version") == "1");
    CHECK(logits_of(m, kPrompt) == expected);
  }
  std::string bad = body(true);
  put<std::int32_t>(bad, 4, 3);
  CHECK_THROWS_WITH_AS(load_llama2c(write(dir, "v3.bin", bad)), doctest::Contains("v3.bin: header field version = 3 is not supported"),
                       EngineError);
  bad = body(true);
  bad[36] = 7;
  CHECK_THROWS_WITH_AS(load_llama2c(write(dir, "flag.bin", bad)), doctest::Contains("header field shared_classifier = 7 is invalid"),
                       EngineError);
  CHECK_THROWS_WITH_AS(load_llama2c(write(dir, "v1short.bin", body(true).substr(0, 200))),
                       doctest::Contains("smaller than the 256-byte ak42 header"), EngineError);
}

TEST_CASE("llama2c ak42 version 2 (Q8_0) dequantizes q * scale per group") {
  const Model legacy = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  const auto& c = legacy.config;
  const auto& w = legacy.weights;
  const int gs = 64;
  std::vector<float> dequant_embd;  // what the loader must produce for token_embedding
  auto quantize = [&](std::string& out, std::span<const float> x, std::vector<float>* dq) {
    // export.py quantize_q80: scale = max|x| / 127 per group, q = round(x / scale).
    std::string q(x.size(), '\0');
    std::vector<float> scales(x.size() / gs);
    for (std::size_t g = 0; g < scales.size(); ++g) {
      float mx = 0;
      for (int j = 0; j < gs; ++j) mx = std::max(mx, std::fabs(x[g * gs + static_cast<std::size_t>(j)]));
      scales[g] = mx / 127.0f;
      for (int j = 0; j < gs; ++j) {
        const std::size_t i = g * gs + static_cast<std::size_t>(j);
        const auto qi = static_cast<std::int8_t>(std::lround(scales[g] > 0 ? x[i] / scales[g] : 0.0f));
        q[i] = static_cast<char>(qi);
        if (dq) dq->push_back(static_cast<float>(qi) * scales[g]);
      }
    }
    out += q;
    append_f32(out, scales);
  };
  std::string out = ak42_header(c, 2, true, gs);
  for (const auto& l : w.layers) append_f32(out, l.attn_norm);
  for (const auto& l : w.layers) append_f32(out, l.ffn_norm);
  append_f32(out, w.output_norm);
  quantize(out, w.tok_embd, &dequant_embd);
  for (auto m : {&LayerWeights::wq, &LayerWeights::wk, &LayerWeights::wv, &LayerWeights::wo, &LayerWeights::w_gate, &LayerWeights::w_down,
                 &LayerWeights::w_up}) {
    for (const auto& l : w.layers) quantize(out, l.*m, nullptr);  // one int8 + scales block per layer
  }
  const auto dir = atlas::test::scratch_dir("llama2c-v2");
  const Model q8 = load_llama2c(write(dir, "q80.bin", out), atlas::test::stories_tok());
  CHECK(q8.config.dim == 64);
  CHECK(std::equal(q8.weights.tok_embd.begin(), q8.weights.tok_embd.end(), dequant_embd.begin(), dequant_embd.end()));
  for (std::size_t i = 0; i < w.layers[4].w_up.size(); ++i) {
    REQUIRE(std::fabs(q8.weights.layers[4].w_up[i] - w.layers[4].w_up[i]) <= 0.01f);
  }
  // Quantization noise moves logits only slightly: the greedy first token is unchanged.
  const auto a = logits_of(legacy, kPrompt), b = logits_of(q8, kPrompt);
  CHECK(argmax(a) == argmax(b));

  std::string bad = out;
  put<std::int32_t>(bad, 37, 0);
  CHECK_THROWS_WITH_AS(load_llama2c(write(dir, "gs0.bin", bad)), doctest::Contains("header field group_size = 0 is invalid"), EngineError);
  put<std::int32_t>(bad, 37, 48);
  CHECK_THROWS_WITH_AS(load_llama2c(write(dir, "gs48.bin", bad)), doctest::Contains("group_size = 48 does not divide the 32768 values of token_embedding"),
                       EngineError);
  CHECK_THROWS_WITH_AS(load_llama2c(write(dir, "q80short.bin", out.substr(0, out.size() - 1))),
                       doctest::Contains("q80short.bin: file size is"), EngineError);
}
