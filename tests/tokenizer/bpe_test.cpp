// Byte-level BPE: byte alphabet, split regexes, ranked merges, added tokens, tokenizer.json.
#include <doctest/doctest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "engine/tokenizer/unicode.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;
using Pieces = std::vector<std::string_view>;

namespace {

/// 256 byte tokens (id = byte) plus `extra` merged tokens from id 256 on.
BpeVocab byte_vocab(const std::vector<std::pair<std::string, std::string>>& merges) {
  BpeVocab v;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(byte_to_unicode(static_cast<unsigned char>(b)));
  for (const auto& [l, r] : merges) {
    if (std::find(v.tokens.begin(), v.tokens.end(), l + r) == v.tokens.end()) v.tokens.push_back(l + r);
  }
  v.merges = merges;
  return v;
}

int id_of(const BpeVocab& v, const std::string& t) { return static_cast<int>(std::find(v.tokens.begin(), v.tokens.end(), t) - v.tokens.begin()); }

std::string decode(const Tokenizer& t, const std::vector<int>& ids) {
  std::string s;
  for (int id : ids) s += t.token_bytes(-1, id);
  return s;
}

}  // namespace

TEST_CASE("GPT-2 byte-to-unicode map") {
  CHECK(byte_to_unicode(' ') == "\xC4\xA0");   // U+0120 'Ġ'
  CHECK(byte_to_unicode('\n') == "\xC4\x8A");  // U+010A 'Ċ'
  CHECK(byte_to_unicode(0) == "\xC4\x80");     // U+0100
  CHECK(byte_to_unicode('A') == "A");
  CHECK(byte_to_unicode(0xAD) == "\xC5\x83");  // soft hyphen -> U+0143
  CHECK(byte_to_unicode(0xE9) == "\xC3\xA9");  // printable Latin-1 maps to itself
  for (int b = 0; b < 256; ++b) {
    const std::string& s = byte_to_unicode(static_cast<unsigned char>(b));
    const auto d = unicode::decode_utf8(s, 0);
    REQUIRE(d.valid);
    REQUIRE(static_cast<std::size_t>(d.len) == s.size());
    REQUIRE(unicode_to_byte(d.cp) == b);
  }
  CHECK(unicode_to_byte(U'Z') == 'Z');
  CHECK(unicode_to_byte(0x4E2D) == -1);
}

TEST_CASE("code-point classes") {
  CHECK(unicode::is_letter(U'é'));
  CHECK(unicode::is_letter(0x4E2D));   // 中
  CHECK(unicode::is_letter(0x3042));   // あ
  CHECK_FALSE(unicode::is_letter(U'1'));
  CHECK(unicode::is_number(0x0663));   // Arabic-Indic three
  CHECK(unicode::is_number(0x2160));   // Roman numeral one (Nl)
  CHECK(unicode::is_number(0x00BD));   // ½ (No)
  CHECK_FALSE(unicode::is_number(U'x'));
  CHECK(unicode::is_whitespace(0x3000));
  CHECK(unicode::is_whitespace(U'\t'));
  CHECK_FALSE(unicode::is_whitespace(0x200B));  // zero width space is not White_Space
  CHECK_FALSE(unicode::is_letter(0x1F642));     // emoji
  CHECK_FALSE(unicode::decode_utf8("\xC0\x80", 0).valid);  // overlong
  CHECK_FALSE(unicode::decode_utf8("\xED\xA0\x80", 0).valid);  // surrogate
  CHECK_FALSE(unicode::decode_utf8("\xE4\xB8", 0).valid);  // truncated
}

TEST_CASE("Qwen2 split regex") {
  const auto q = PreTokenizer::qwen2;
  CHECK(pre_tokenize(q, "Hello world") == Pieces{"Hello", " world"});
  CHECK(pre_tokenize(q, "abc's WE'RE") == Pieces{"abc", "'s", " WE", "'RE"});
  CHECK(pre_tokenize(q, "12345") == Pieces{"1", "2", "3", "4", "5"});
  CHECK(pre_tokenize(q, "a  b") == Pieces{"a", " ", " b"});
  CHECK(pre_tokenize(q, "x\n\ny") == Pieces{"x", "\n\n", "y"});
  CHECK(pre_tokenize(q, "hi!!\n\nok") == Pieces{"hi", "!!\n\n", "ok"});
  CHECK(pre_tokenize(q, "a \n b") == Pieces{"a", " \n", " b"});
  CHECK(pre_tokenize(q, "end  ") == Pieces{"end", "  "});
  CHECK(pre_tokenize(q, "\tfoo(bar)") == Pieces{"\tfoo", "(bar", ")"});
  CHECK(pre_tokenize(q, "\xF0\x9F\x99\x82 \xF0\x9F\x99\x82") == Pieces{"\xF0\x9F\x99\x82", " \xF0\x9F\x99\x82"});
  CHECK(pre_tokenize(q, "'hello") == Pieces{"'hello"});
  CHECK(pre_tokenize(q, "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C") == Pieces{"\xE4\xBD\xA0\xE5\xA5\xBD", "\xEF\xBC\x8C"});  // 你好，
  CHECK(pre_tokenize(q, "a\xFF" "b") == Pieces{"a", "\xFF" "b"});  // an invalid byte is a symbol
}

TEST_CASE("Llama-3 and GPT-2 split regexes") {
  CHECK(pre_tokenize(PreTokenizer::llama3, "12345 x") == Pieces{"123", "45", " x"});
  CHECK(pre_tokenize(PreTokenizer::llama3, "I'LL") == Pieces{"I", "'LL"});
  CHECK(pre_tokenize(PreTokenizer::gpt2, "12345 x") == Pieces{"12345", " x"});
  CHECK(pre_tokenize(PreTokenizer::gpt2, "I'LL") == Pieces{"I", "'", "LL"});  // case-sensitive contractions
  CHECK(pre_tokenize(PreTokenizer::gpt2, "Hello  world!!") == Pieces{"Hello", " ", " world", "!!"});
  CHECK(pre_tokenize(PreTokenizer::gpt2, "a\n\nb") == Pieces{"a", "\n", "\n", "b"});
  CHECK(pre_tokenize(PreTokenizer::gpt2, " 42") == Pieces{" 42"});
}

TEST_CASE("merges apply lowest rank first, leftmost on ties") {
  SUBCASE("rank order decides") {
    const BpeVocab v1 = byte_vocab({{"l", "l"}, {"e", "l"}});
    const auto t1 = make_bpe_tokenizer(v1);
    CHECK(t1->encode("ell", false) == std::vector<int>{'e', id_of(v1, "ll")});
    const BpeVocab v2 = byte_vocab({{"e", "l"}, {"l", "l"}});
    const auto t2 = make_bpe_tokenizer(v2);
    CHECK(t2->encode("ell", false) == std::vector<int>{id_of(v2, "el"), 'l'});
  }
  SUBCASE("equal pairs merge left to right") {
    const BpeVocab v = byte_vocab({{"a", "a"}});
    const auto t = make_bpe_tokenizer(v);
    CHECK(t->encode("aaa", false) == std::vector<int>{id_of(v, "aa"), 'a'});
    CHECK(t->encode("aaaa", false) == std::vector<int>{id_of(v, "aa"), id_of(v, "aa")});
  }
  SUBCASE("merges chain and never cross pre-token boundaries") {
    const BpeVocab v = byte_vocab({{"h", "e"}, {"l", "l"}, {"he", "ll"}, {"hell", "o"}, {"\xC4\xA0", "w"}, {"o", "\xC4\xA0"}});
    const auto t = make_bpe_tokenizer(v);
    CHECK(t->encode("hello", false) == std::vector<int>{id_of(v, "hello")});
    CHECK(t->encode("hello world", false) == std::vector<int>{id_of(v, "hello"), id_of(v, "\xC4\xA0w"), 'o', 'r', 'l', 'd'});
  }
  SUBCASE("merges whose result is not a token are ignored") {
    BpeVocab v = byte_vocab({});
    v.merges = {{"x", "y"}};
    CHECK(make_bpe_tokenizer(v)->encode("xy", false) == std::vector<int>{'x', 'y'});
  }
}

TEST_CASE("added tokens are split out first, with lstrip/rstrip") {
  BpeVocab v = byte_vocab({{"a", "b"}});
  v.added = {{"<|x|>", 300}, {"<|xy|>", 301}, {"<L>", 302, true, true, false, false}, {"<R>", 303, true, false, true, false}};
  v.bos = 301;
  const auto t = make_bpe_tokenizer(v);
  const int ab = id_of(v, "ab");
  CHECK(t->vocab_size() == 304);
  CHECK(t->encode("ab<|x|>ab", false) == std::vector<int>{ab, 300, ab});
  CHECK(t->encode("<|xy|><|x|>", false) == std::vector<int>{301, 300});
  CHECK(t->encode("<|x|", false) == std::vector<int>{'<', '|', 'x', '|'});
  CHECK(t->encode("a <L>", false) == std::vector<int>{'a', 302});      // lstrip eats the space
  CHECK(t->encode("<R>  b", false) == std::vector<int>{303, 'b'});     // rstrip eats both spaces
  CHECK(t->encode("ab", true) == std::vector<int>{301, ab});
  CHECK(t->token_bytes(-1, 300) == "<|x|>");
  CHECK(t->piece_to_id("<|xy|>") == 301);
  CHECK(t->piece_to_id("ab") == ab);
  CHECK_FALSE(t->piece_to_id("zz").has_value());
  // Past the last token (an embedding row with no token): an empty piece, as Hugging Face decodes it.
  CHECK(t->token_bytes(-1, 304).empty());
  CHECK(t->decode(std::vector<int>{'a', 304, 'b'}) == "ab");
  CHECK_THROWS_WITH_AS(t->token_bytes(-1, -1), doctest::Contains("token id -1 is negative"), EngineError);
}

TEST_CASE("decode(encode(bytes)) is the identity, invalid UTF-8 included") {
  const BpeVocab v = byte_vocab({{"\xC4\xA0", "t"}, {"h", "e"}, {"\xC4\xA0t", "he"}});
  for (PreTokenizer p : {PreTokenizer::gpt2, PreTokenizer::llama3, PreTokenizer::qwen2}) {
    BpeVocab vp = v;
    vp.pre = p;
    const auto t = make_bpe_tokenizer(vp);
    std::mt19937 rng(1234);
    for (int i = 0; i < 200; ++i) {
      std::string s(static_cast<std::size_t>(rng() % 40), '\0');
      for (auto& ch : s) ch = static_cast<char>(rng() % 4 == 0 ? rng() % 256 : " \n'atheé1"[rng() % 9]);
      REQUIRE(decode(*t, t->encode(s, false)) == s);
    }
    CHECK(t->encode(" the", false) == std::vector<int>{id_of(v, "\xC4\xA0the")});
  }
}

TEST_CASE("load_tokenizer_json: a small GPT-2 style file, and its errors") {
  const auto dir = atlas::test::scratch_dir("tokenizer-json");
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_to_unicode(static_cast<unsigned char>(b))] = b;
  vocab["\xC4\xA0h"] = 256;
  vocab["\xC4\xA0hi"] = 257;
  nlohmann::json j = {
      {"version", "1.0"},
      {"added_tokens", {{{"id", 258}, {"content", "<s>"}, {"special", true}}, {{"id", 259}, {"content", "<|eot_id|>"}, {"special", true}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}}},
      {"post_processor", {{"type", "TemplateProcessing"}, {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"\xC4\xA0 h", nlohmann::json::array({"\xC4\xA0h", "i"})}}}}};
  const auto path = dir / "tokenizer.json";
  atlas::write_file_atomic(path, j.dump());
  const auto t = load_tokenizer_json(path);
  CHECK(t->bos_id() == 258);
  CHECK(t->encode("hi", true) == std::vector<int>{258, 257});  // add_prefix_space: " hi"
  CHECK(t->encode("hi<|eot_id|>", false) == std::vector<int>{257, 259});
  CHECK(t->encode("<|eot_id|>hi", false) == std::vector<int>{259, 257});  // the prefix applies after an added token too
  CHECK(t->encode(" hi", false) == std::vector<int>{257});
  CHECK(t->stop_ids() == std::vector<int>{259});
  CHECK_FALSE(t->eos_id().has_value());

  auto bad = [&](nlohmann::json jj) -> std::string {
    atlas::write_file_atomic(path, jj.dump());
    try {
      load_tokenizer_json(path);
    } catch (const EngineError& e) {
      return e.what();
    }
    return "(no error)";
  };
  nlohmann::json b1 = j;
  b1["model"]["type"] = "WordPiece";
  CHECK(bad(b1).find("tokenizer.json: model.type: unsupported \"WordPiece\"") != std::string::npos);
  nlohmann::json b2 = j;
  b2["pre_tokenizer"] = {{"type", "Sequence"},
                         {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", "\\w+"}}}, {"behavior", "Isolated"}, {"invert", false}}, {{"type", "ByteLevel"}, {"use_regex", false}}}}};
  CHECK(bad(b2).find("pre_tokenizer.pretokenizers[0].pattern.Regex: no implementation of the split regex \"\\\\w+\"") != std::string::npos);
  nlohmann::json b3 = j;
  b3["normalizer"] = {{"type", "Lowercase"}};
  CHECK(bad(b3).find("normalizer.type: unsupported \"Lowercase\"") != std::string::npos);
  nlohmann::json b4 = j;
  b4["model"]["merges"] = {42};
  CHECK(bad(b4).find("model.merges[0]: expected \"left right\" or [left, right], got 42") != std::string::npos);
  // A field of the wrong JSON type is an error naming the field and the value (fuzz_tokenizer_json:
  // "normalizer": 15 escaped as nlohmann's type_error; fuzz/corpus/tokenizer_json/regress-normalizer-number.json).
  nlohmann::json b5 = j;
  b5["normalizer"] = 15;
  CHECK(bad(b5).find("tokenizer.json: normalizer: expected an object, got 15") != std::string::npos);
  nlohmann::json b6 = j;
  b6["normalizer"] = {{"type", 5}};
  CHECK(bad(b6).find("normalizer.type: expected a string, got 5") != std::string::npos);
  nlohmann::json b7 = j;
  b7["added_tokens"][0]["special"] = "yes";
  CHECK(bad(b7).find("added_tokens[0].special: expected true or false, got \"yes\"") != std::string::npos);
  nlohmann::json b8 = j;
  b8["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {7, {{"type", "ByteLevel"}}}}};
  CHECK(bad(b8).find("pre_tokenizer.pretokenizers[0]: expected an object, got 7") != std::string::npos);
  nlohmann::json b9 = j;
  b9["model"]["type"] = 3;
  CHECK(bad(b9).find("model.type: expected a string, got 3") != std::string::npos);
  nlohmann::json b10 = j;
  b10["pre_tokenizer"]["use_regex"] = "no";
  CHECK(bad(b10).find("pre_tokenizer.use_regex: expected true or false, got \"no\"") != std::string::npos);
  atlas::write_file_atomic(path, "{not json");
  CHECK_THROWS_WITH_AS(load_tokenizer_json(path), doctest::Contains("tokenizer.json: not valid JSON"), EngineError);
}
