// The synthetic vocabulary make-model writes by default: names llama.cpp's GGUF reader knows,
// every piece valid UTF-8 on its own, a file our reader reads back.
#include <doctest/doctest.h>

#include <cstdlib>
#include <set>

#include "engine/error.hpp"
#include "engine/formats/gguf.hpp"
#include "engine/formats/gguf_writer.hpp"
#include "engine/formats/presets.hpp"
#include "engine/tokenizer/synthetic_vocab.hpp"
#include "tests/built_exe.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

using namespace atlas::engine;

namespace {
bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (int k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}
}  // namespace

TEST_CASE("synthetic vocabulary: unique pieces, each valid UTF-8 alone, merges of earlier tokens, a newline") {
  for (int size : {98, 512, 32000}) {
    CAPTURE(size);
    const BpeVocab v = synthetic_bpe_vocab(size);
    REQUIRE(static_cast<int>(v.tokens.size()) == size);
    CHECK(std::set<std::string>(v.tokens.begin(), v.tokens.end()).size() == v.tokens.size());
    const auto tok = make_bpe_tokenizer(v);
    for (int id = 0; id < size; ++id) {
      const std::string bytes = tok->token_bytes(-1, id);
      INFO(id);
      CHECK(valid_utf8(bytes));
      for (unsigned char c : bytes) CHECK(c < 0x80);  // ASCII: any order of ids is valid text
    }
    const std::set<std::string> known(v.tokens.begin(), v.tokens.end());
    for (std::size_t r = 0; r < v.merges.size(); ++r) {
      CHECK(known.count(v.merges[r].first) == 1);
      CHECK(known.count(v.merges[r].second) == 1);
      CHECK(v.tokens[98 + r] == v.merges[r].first + v.merges[r].second);
    }
    CHECK(v.bos == 0);
    CHECK(v.eos == 0);
    const auto ids = tok->encode("hello world\n", false);
    CHECK(tok->decode(ids) == "hello world\n");
    CHECK(tok->encode("\n", false).size() == 1);  // llama.cpp looks up its newline token
  }
  CHECK(make_bpe_tokenizer(synthetic_bpe_vocab(512))->encode("ab", false).size() == 1);  // "ab" is a merge
  CHECK_THROWS_WITH_AS(synthetic_bpe_vocab(97), doctest::Contains("vocab_size 97 is below the 98 tokens"), EngineError);
}

TEST_CASE("GGUF with the synthetic vocabulary: llama.cpp's model and pre-tokenizer names; read back") {
  const auto dir = atlas::test::scratch_dir("synthetic-vocab");
  const Model m = make_preset_model("tiny-qwen3", 3);
  GgufWriteOptions w;
  w.tokenizer = synthetic_bpe_vocab(m.config.vocab_size);
  write_gguf(dir / "m.gguf", m, w);
  const GgufFile f = read_gguf(dir / "m.gguf");
  CHECK(f.get_string("tokenizer.ggml.model") == "gpt2");
  CHECK(f.get_string("tokenizer.ggml.pre") == "gpt-2");  // llama.cpp refuses "gpt2" here
  CHECK(f.get_array("tokenizer.ggml.tokens").items.size() == 512);
  CHECK(f.get_array("tokenizer.ggml.merges").items.size() == 512 - 98);
  CHECK(f.get_uint("tokenizer.ggml.bos_token_id") == 0);
  CHECK(f.get_uint("tokenizer.ggml.eos_token_id") == 0);
  const Model r = load_model(dir / "m.gguf");
  REQUIRE(r.tokenizer != nullptr);
  CHECK(r.tokenizer->vocab_size() == 512);
  CHECK(r.tokenizer->decode(r.tokenizer->encode("the cat", false)) == "the cat");
  CHECK(r.tokenizer->bos_id() == 0);
}

TEST_CASE("atlas-bench make-model writes the synthetic vocabulary by default, none on request") {
  const std::string exe = atlas::test::bench_exe_or_skip();
  if (exe.empty()) return;
  const auto dir = atlas::test::scratch_dir("make-model-vocab");
  for (const char* preset : {"tiny-llama", "qwen3-next-tiny"}) {
    CAPTURE(preset);
    const std::string base = std::string(exe) + " make-model --preset " + preset + " --seed 2 --out ";
    REQUIRE(std::system((base + (dir / "a.gguf").string() + " > /dev/null").c_str()) == 0);
    CHECK(read_gguf(dir / "a.gguf").get_string("tokenizer.ggml.pre") == "gpt-2");
    REQUIRE(std::system((base + (dir / "b.gguf").string() + " --tokenizer none > /dev/null").c_str()) == 0);
    CHECK(read_gguf(dir / "b.gguf").get_string("tokenizer.ggml.model") == "none");
  }
}
