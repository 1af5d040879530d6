// stories260K.gguf is the llama2.c stories260K model: same weights, same tokenizer ids, and the
// same greedy outputs as golden-public.jsonl (made with llama2.c run.c).
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/backend.hpp"
#include "engine/error.hpp"
#include "engine/formats/llama2c.hpp"
#include "engine/session.hpp"
#include "tests/golden.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {

bool bit_equal(std::span<const float> a, std::span<const float> b) { return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0; }

}  // namespace

TEST_CASE("stories260K.gguf weights equal load_llama2c's, tensor by tensor") {
  const Model g = load_model(atlas::test::stories_gguf());
  const Model c = load_llama2c(atlas::test::stories_bin(), atlas::test::stories_tok());
  CHECK(g.config.dim == c.config.dim);
  CHECK(g.config.n_kv_heads == c.config.n_kv_heads);
  CHECK(g.config.rope_layout == c.config.rope_layout);
  CHECK(bit_equal(g.weights.tok_embd, c.weights.tok_embd));
  CHECK(bit_equal(g.weights.output, c.weights.output));
  CHECK(bit_equal(g.weights.output_norm, c.weights.output_norm));
  REQUIRE(g.weights.layers.size() == c.weights.layers.size());
  for (std::size_t l = 0; l < g.weights.layers.size(); ++l) {
    CAPTURE(l);
    const auto &a = g.weights.layers[l], &b = c.weights.layers[l];
    CHECK(bit_equal(a.attn_norm, b.attn_norm));
    CHECK(bit_equal(a.wq, b.wq));
    CHECK(bit_equal(a.wk, b.wk));
    CHECK(bit_equal(a.wv, b.wv));
    CHECK(bit_equal(a.wo, b.wo));
    CHECK(bit_equal(a.ffn_norm, b.ffn_norm));
    CHECK(bit_equal(a.w_gate, b.w_gate));
    CHECK(bit_equal(a.w_up, b.w_up));
    CHECK(bit_equal(a.w_down, b.w_down));
  }
}

TEST_CASE("load_model on the llama2.c file finds tok512.bin beside it") {
  const Model m = load_model(atlas::test::stories_bin());
  CHECK(m.source.format == "llama2c");
  CHECK(m.source.path == atlas::test::stories_bin());
  CHECK(m.source.metadata.at("tokenizer") == atlas::test::stories_tok().string());
  REQUIRE(m.tokenizer != nullptr);
  CHECK(m.tokenizer->vocab_size() == 512);
}

TEST_CASE("golden: stories260K.gguf reproduces every record's prompt_ids and greedy output_ids") {
  Model model = load_model(atlas::test::stories_gguf());
  auto backend = make_backend(model, {});
  atlas::test::check_golden_records(model, *backend);
}

TEST_CASE("a truncated llama2.c checkpoint is named as such, with the sizes") {
  const auto dir = atlas::test::scratch_dir("truncated_llama2c");
  const auto cut = dir / "stories260K.bin";
  {
    std::ifstream in(atlas::test::stories_bin(), std::ios::binary);
    std::vector<char> head(500'000);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    std::ofstream(cut, std::ios::binary).write(head.data(), in.gcount());
  }
  const auto full = std::filesystem::file_size(atlas::test::stories_bin());
  const std::string want =
      "truncated llama2.c checkpoint? its header implies " + std::to_string(full) + " bytes, the file has 500000";
  CHECK_THROWS_WITH_AS(load_model(cut), doctest::Contains(want.c_str()), EngineError);
}
