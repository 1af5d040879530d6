// SentencePiece BPE (llama2.c tok512.bin and a GGUF-style vocabulary with U+2581), decoding,
// byte fallback and the streaming UTF-8 decoder.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/tokenizer/spm.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {
std::shared_ptr<const Tokenizer> tok512() {
  static auto t = load_llama2c_tokenizer(atlas::test::stories_tok(), 512);
  return t;
}

/// tok512 rewritten the way GGUF stores it: U+2581 word markers, <s>/</s>, token types.
SpmVocab gguf_style_vocab() {
  SpmVocab v;
  std::ifstream in(atlas::test::stories_tok(), std::ios::binary);
  std::int32_t max_len;
  in.read(reinterpret_cast<char*>(&max_len), 4);
  for (int id = 0; id < 512; ++id) {
    float score;
    std::int32_t len;
    in.read(reinterpret_cast<char*>(&score), 4);
    in.read(reinterpret_cast<char*>(&len), 4);
    std::string piece(static_cast<std::size_t>(len), '\0');
    in.read(piece.data(), len);
    std::string marked;
    for (char c : piece) marked += c == ' ' ? std::string("\xE2\x96\x81") : std::string(1, c);
    if (id == 1) marked = "<s>";
    if (id == 2) marked = "</s>";
    v.pieces.push_back(marked);
    v.scores.push_back(score);
    v.types.push_back(id == 0 ? 2 : id <= 2 ? 3 : id <= 258 ? 6 : 1);
  }
  return v;
}
}  // namespace

TEST_CASE("tok512: llama2.c encoding details") {
  const auto& t = *tok512();
  CHECK(t.vocab_size() == 512);
  CHECK(t.bos_id() == 1);
  CHECK(t.eos_id() == 2);
  CHECK(t.stop_ids() == std::vector<int>{1, 2});
  CHECK(t.encode("", true) == std::vector<int>{1});   // no dummy prefix for empty text
  CHECK(t.encode("", false).empty());
  CHECK(t.encode("Once upon a time", true) == std::vector<int>{1, 403, 407, 261, 378});  // golden record p01
  // 'é' (C3 A9) is a piece (id 485); 'ü' (C3 BC) is not, so it falls back to <0xC3> <0xBC> = byte + 3
  CHECK(t.encode("\xC3\xA9", false) == std::vector<int>{410, 485});
  CHECK(t.encode("\xC3\xBC", false) == std::vector<int>{410, 0xC3 + 3, 0xBC + 3});
}

TEST_CASE("tok512: text round-trips byte-exact through encode/decode") {
  const auto& t = *tok512();
  for (const std::string text : {"h\xC3\xA9llo \xF0\x9F\xA6\x99", "Once upon a time, there was a little girl.", "a  b\n\nc\t!",
                                 "\xE4\xB8\xAD\xE6\x96\x87 mixed 123"}) {
    CAPTURE(text);
    const auto ids = t.encode(text, true);
    // After BOS the dummy-prefix space is dropped, so decode gives the text back exactly.
    CHECK(t.decode(ids) == text);
  }
}

TEST_CASE("tok512: decode rules") {
  const auto& t = *tok512();
  const auto sp_once = t.encode("Once", false);  // " Once" merged
  REQUIRE(sp_once.size() == 1);
  CHECK(t.token_bytes(1, sp_once[0]) == "Once");   // leading space dropped after BOS
  CHECK(t.token_bytes(13, sp_once[0]) == " Once");
  CHECK(t.token_bytes(-1, 0x41 + 3) == "A");        // <0x41>
  CHECK(t.token_bytes(-1, 1).empty());               // BOS prints nothing
  CHECK(t.piece_to_id(" Once") == sp_once[0]);
  CHECK(t.token_bytes(-1, 512).empty());  // past the 512 pieces: an empty piece (see Tokenizer::token_bytes)
  CHECK_THROWS_WITH_AS(t.token_bytes(-1, -3), doctest::Contains("token id -3 is negative"), EngineError);
}

TEST_CASE("spm vocabulary with U+2581 markers and GGUF types encodes like tok512") {
  const auto gguf = make_spm_tokenizer(gguf_style_vocab());
  const auto& t = *tok512();
  for (const std::string text : {"Once upon a time", "One day, Lily", "Tim's mom said, \"No!\"", "h\xC3\xA9llo \xF0\x9F\xA6\x99", " two  spaces",
                                 "<s> is not BOS"}) {
    CAPTURE(text);
    CHECK(gguf->encode(text, true) == t.encode(text, true));
    CHECK(gguf->decode(gguf->encode(text, true)) == text);
  }
  CHECK(gguf->stop_ids() == std::vector<int>{2});
  CHECK(gguf->piece_to_id("\xE2\x96\x81Once") == t.piece_to_id(" Once"));
  SpmVocab bad = gguf_style_vocab();
  bad.scores.pop_back();
  CHECK_THROWS_WITH_AS(make_spm_tokenizer(bad), doctest::Contains("scores has 511 entries"), EngineError);
}

TEST_CASE("StreamDecoder holds back incomplete UTF-8 across tokens") {
  const auto& t = *tok512();
  // U+1F999 (F0 9F A6 99) arrives as four byte tokens.
  StreamDecoder d(t, 13);
  CHECK(d.push(0xF0 + 3).empty());
  CHECK(d.push(0x9F + 3).empty());
  CHECK(d.push(0xA6 + 3).empty());
  CHECK(d.push(0x99 + 3) == "\xF0\x9F\xA6\x99");
  CHECK(d.push(0x41 + 3) == "A");
  // An incomplete sequence then ASCII: the broken lead byte is passed through as-is.
  CHECK(d.push(0xC3 + 3).empty());
  CHECK(d.push(0x41 + 3) == "\xC3" "A");
  CHECK(d.push(0xE4 + 3).empty());
  CHECK(d.flush() == "\xE4");
  CHECK(d.flush().empty());
  // Streaming a whole encoded text reproduces decode().
  const std::string text = "h\xC3\xA9llo \xF0\x9F\xA6\x99 world";
  const auto ids = t.encode(text, true);
  StreamDecoder s(t);
  std::string streamed;
  for (int id : ids) streamed += s.push(id);
  streamed += s.flush();
  CHECK(streamed == text);
}

TEST_CASE("load_llama2c_tokenizer: truncated and corrupt files name the field") {
  const auto dir = atlas::test::scratch_dir("tokenizer");
  std::ifstream in(atlas::test::stories_tok(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto write = [&](const std::string& name, const std::string& data) {
    std::ofstream(dir / name, std::ios::binary) << data;
    return dir / name;
  };
  CHECK_THROWS_WITH_AS(load_llama2c_tokenizer(write("short.bin", bytes.substr(0, 100)), 512),
                       doctest::Contains("short.bin: truncated at byte"), EngineError);
  std::string bad_len = bytes;
  const std::int32_t huge = 1000;
  std::memcpy(bad_len.data() + 4 + 4, &huge, 4);  // token 0 length
  CHECK_THROWS_WITH_AS(load_llama2c_tokenizer(write("badlen.bin", bad_len), 512),
                       doctest::Contains("token 0 length = 1000 is invalid"), EngineError);
  CHECK_THROWS_WITH_AS(load_llama2c_tokenizer(dir / "missing.bin", 512), doctest::Contains("missing.bin: cannot open"), EngineError);
}

TEST_CASE("spm: the dummy prefix falls back to the <0x20> byte piece when there is no space piece") {
  SpmVocab v;
  v.pieces = {"<unk>", "<s>", "</s>", "<0x20>", "a", "b", "ab"};
  v.scores = {0, 0, 0, 0, -1, -2, -0.5f};
  v.types = {2, 3, 3, 6, 1, 1, 1};
  const auto t = make_spm_tokenizer(v);
  CHECK(t->encode("ab", true) == std::vector<int>{1, 3, 6});
  CHECK(t->encode("abc", false) == std::vector<int>{3, 6, 0});  // 'c': no piece, no byte piece -> unk
  v.add_space_prefix = false;
  CHECK(make_spm_tokenizer(v)->encode("ab", true) == std::vector<int>{1, 6});
}
