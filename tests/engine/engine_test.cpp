// The Engine facade (load_model + backend + session) and the `atlas-bench generate` command.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine.hpp"
#include "engine/error.hpp"
#include "engine/formats/presets.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "tests/built_exe.hpp"
#include "tests/engine/random_model.hpp"
#include "tests/run_process.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

using namespace atlas::engine;

namespace {
/// The golden record "stories260K/p01/n64": prompt "Once upon a time", 60 greedy tokens.
nlohmann::json golden(const std::string& id) {
  std::ifstream in(atlas::test::golden_jsonl());
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.at("id") == id) return j;
  }
  FAIL("no golden record " << id);
  return {};
}

std::string run(const std::string& cmd, int* status) {
  atlas::test::ShellResult r = atlas::test::run_shell(cmd);
  *status = r.rc;
  return std::move(r.out);
}
}  // namespace

TEST_CASE("Engine::open: a llama2.c path gives model, tokenizer, backend and session") {
  EngineOptions o;
  o.model = atlas::test::stories_bin().string();
  Engine e = Engine::open(o);
  CHECK(e.model().config.name == "stories260K");
  CHECK(e.backend().name() == "cpu");
  const auto rec = golden("stories260K/p01/n64");
  GenerateRequest req;
  req.prompt_ids = e.tokenizer().encode(rec.at("prompt").get<std::string>(), true);
  CHECK(req.prompt_ids == rec.at("prompt_ids").get<std::vector<int>>());
  req.max_new_tokens = 60;
  req.stop_ids = {1};
  Engine moved = std::move(e);  // references stay valid across moves
  CHECK(moved.session().generate(req).output_ids == rec.at("output_ids").get<std::vector<int>>());
  CHECK(&moved.session().backend() == &moved.backend());
}

TEST_CASE("embedding rows beyond the tokenizer's tokens: such an id decodes to an empty piece, generation goes on, the id stays") {
  // Qwen pads 151,669 tokens to 151,936 embedding rows; here 512 rows and an 8-token byte-level
  // tokenizer ("a".."h"), so nearly everything a random model emits has no token.
  ModelConfig c = find_preset("tiny-qwen3").config;
  REQUIRE(c.vocab_size == 512);
  Model m = make_random_model(c, 11);
  BpeVocab v;
  for (char c = 'a'; c <= 'h'; ++c) v.tokens.push_back(byte_to_unicode(static_cast<unsigned char>(c)));
  m.tokenizer = make_bpe_tokenizer(v);
  Engine e = Engine::from_model(std::move(m), BackendOptions{});
  const Tokenizer& tok = e.tokenizer();
  REQUIRE(tok.vocab_size() == 8);
  GenerateRequest req;
  req.prompt_ids = {0, 1, 2, 3};  // "abcd"
  req.max_new_tokens = 48;
  req.sampling.temperature = 100.0f;  // a random tied-embedding model repeats its input token; a flat softmax visits the vocabulary
  req.sampling.seed = 5;
  std::string streamed;
  StreamDecoder stream(tok, req.prompt_ids.back());
  const GenerateResult r = e.session().generate(req, [&](const TokenEvent& ev) { streamed += stream.push(ev.id); });
  streamed += stream.flush();
  CHECK(r.output_ids.size() == 48);
  CHECK(r.stop == StopReason::max_tokens);
  std::string expected;
  int beyond = 0;
  for (int id : r.output_ids) {
    if (id >= 8) {
      ++beyond;
    } else {
      expected += static_cast<char>('a' + id);
    }
  }
  std::string ids;
  for (int id : r.output_ids) ids += std::to_string(id) + " ";
  CAPTURE(ids);
  REQUIRE(beyond > 0);  // the case under test happened
  CHECK(tok.decode(r.output_ids, req.prompt_ids.back()) == expected);
  CHECK(streamed == expected);
}

TEST_CASE("a model without a tokenizer: the error says where the loader looked and how to give one") {
  const auto dir = std::filesystem::temp_directory_path() / "atlas_engine_no_tokenizer";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto lone = dir / "stories260K.bin";
  std::filesystem::copy_file(atlas::test::stories_bin(), lone);  // no tok512.bin beside it
  EngineOptions o;
  o.model = lone.string();
  Engine e = Engine::open(o);
  const std::string want = "no tokenizer.bin or tok*.bin beside " + lone.string();
  CHECK_THROWS_WITH_AS(e.tokenizer(), doctest::Contains(want.c_str()), EngineError);
  CHECK_THROWS_WITH_AS(e.tokenizer(), doctest::Contains("give one with --tokenizer FILE"), EngineError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Engine::open: max_seq_len, bad backends, synthetic presets") {
  EngineOptions o;
  o.model = atlas::test::stories_bin().string();
  o.max_seq_len = 64;
  CHECK(Engine::open(o).backend().max_seq_len() == 64);
  o.backend.name = "tpu";
  CHECK_THROWS_WITH_AS(Engine::open(o), doctest::Contains("backend 'tpu' is unknown"), EngineError);
  EngineOptions preset;
  preset.model = "preset:tiny-llama@3";
  Engine p = Engine::open(preset);
  // Synthetic presets carry the byte-level tokenizer (one id per byte) so text suites run on them.
  CHECK(p.tokenizer().decode(p.tokenizer().encode("ab", false)) == "ab");
  const std::vector<int> ids{1, 2, 3};
  CHECK(p.backend().forward(ids, 0).size() == static_cast<std::size_t>(p.model().config.vocab_size));
  CHECK_THROWS_AS(Engine::open(EngineOptions{}), EngineError);
}

TEST_CASE("atlas-bench generate --json reproduces the golden greedy run") {
  const std::string exe = atlas::test::bench_exe_or_skip();
  if (exe.empty()) return;
  const auto rec = golden("stories260K/p01/n64");
  int status = 0;
  const std::string out = run(std::string(exe) + " generate --model " + atlas::test::stories_bin().string() +
                                  " --prompt 'Once upon a time' --max-tokens 60 --json",
                              &status);
  REQUIRE(status == 0);
  const auto j = nlohmann::json::parse(out);
  CHECK(j.at("prompt_ids") == rec.at("prompt_ids"));
  CHECK(j.at("output_ids") == rec.at("output_ids"));
  CHECK(j.at("text") == rec.at("output_text"));
  CHECK(j.at("ttft_ms").get<double>() > 0.0);
  CHECK(j.at("decode_tok_s").get<double>() > 0.0);
  // Streaming text mode prints the same text.
  const std::string text = run(std::string(exe) + " generate --model " + atlas::test::stories_bin().string() +
                                   " --prompt 'Once upon a time' --max-tokens 60 2>/dev/null",
                               &status);
  CHECK(status == 0);
  CHECK(text == rec.at("output_text").get<std::string>() + "\n");
  run(std::string(exe) + " generate --model /nonexistent.bin --prompt x 2>/dev/null", &status);
  CHECK(status == 3);
}

TEST_CASE("presets tiny-llama and tiny-qwen3: the CPU backend equals the float64 reference") {
  for (const char* name : {"tiny-llama", "tiny-qwen3"}) {
    CAPTURE(name);
    const Model m = make_preset_model(name, 7);
    CHECK(m.config.qk_norm == (m.config.arch == Arch::qwen3));
    auto b = make_backend(m, {});
    const std::vector<int> tokens{1, 17, 300, 5, 42, 511};
    const auto logits = b->forward(tokens, 0);
    const auto ref = atlas::test::reference_logits(m, tokens);
    for (std::size_t i = 0; i < ref.size(); ++i) REQUIRE(logits[i] == doctest::Approx(ref[i]).epsilon(1e-4).scale(1.0));
  }
}
