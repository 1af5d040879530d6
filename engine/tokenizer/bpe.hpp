#pragma once
// Byte-level BPE (GPT-2, Qwen2/Qwen3, Llama-3): the tokenizer of Hugging Face tokenizer.json
// files and of GGUF files with tokenizer.ggml.model "gpt2".
//
// Encoding follows Hugging Face `tokenizers`:
//  1. Split the text on added tokens (<|im_start|>, <|endoftext|>, ...; leftmost, longest
//     first); those pieces map straight to their ids.
//  2. Normalize: the only normalizer accepted is NFC (Qwen), applied as a no-op. Text that is
//     already NFC (nearly all real text; everything from a UTF-8 NFC source) tokenizes exactly;
//     decomposed sequences (e.g. "e" + U+0301) tokenize as written instead of as the composed
//     character. Full NFC would need the Unicode composition tables, which nothing else here
//     uses.
//  3. Pre-tokenize with the model's split regex, implemented by hand over a UTF-8 code-point
//     classifier (engine/tokenizer/unicode.hpp): std::regex has no \p{L}/\p{N}.
//  4. Map each piece's bytes to GPT-2's byte-to-unicode alphabet and apply the ranked merges,
//     lowest rank first, leftmost first on equal ranks.
// Decoding maps each token's characters back to bytes, so decode(encode(s)) == s byte for byte
// for any valid UTF-8 s (and invalid bytes too: every byte has a token).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::engine {

/// The split regexes we implement (tokenizer.json Split patterns / GGUF tokenizer.ggml.pre).
enum class PreTokenizer {
  /// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  gpt2,
  /// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  llama3,
  /// As llama3 with \p{N} (single digits) instead of \p{N}{1,3}.
  qwen2,
};

const char* to_string(PreTokenizer p);
/// The PreTokenizer whose regex is exactly `pattern` (tokenizer.json Split.pattern.Regex).
std::optional<PreTokenizer> pre_tokenizer_from_regex(std::string_view pattern);
/// GGUF tokenizer.ggml.pre names: "gpt2"/"gpt-2"/"default" -> gpt2, "llama-bpe"/"llama3" -> llama3,
/// "qwen2" -> qwen2.
std::optional<PreTokenizer> pre_tokenizer_from_gguf_name(std::string_view name);

/// Splits `text` into pre-tokens (views into text) with the given regex semantics.
std::vector<std::string_view> pre_tokenize(PreTokenizer p, std::string_view text);

/// `text` cut into consecutive parts of at least `target_bytes` (the last may be shorter), each
/// ending just before a space that follows a printable ASCII character. Every PreTokenizer ends
/// a pre-token there whatever comes next (no pattern takes a space after such a character, and
/// none looks behind), so pre-tokenising the parts one by one gives exactly pre_tokenize(text):
/// encoding walks a long text a part at a time, which lets a bounded encode stop early and keeps
/// the code-point table to one part. A text with no such place is one part.
std::vector<std::string_view> pre_token_segments(std::string_view text, std::size_t target_bytes);

/// GPT-2's reversible byte -> code point map (printable Latin-1 maps to itself, the other bytes
/// to U+0100 upwards), as UTF-8 strings, and its inverse (-1 for code points outside it).
const std::string& byte_to_unicode(unsigned char b);
int unicode_to_byte(char32_t cp);

struct AddedToken {
  std::string content;
  int id = 0;
  bool special = true;
  bool lstrip = false;       ///< absorbs whitespace before it
  bool rstrip = false;       ///< absorbs whitespace after it
  bool single_word = false;  ///< matches only when not inside a word
};

struct BpeVocab {
  std::vector<std::string> tokens;  ///< index = id; byte-level strings ("Ġthe"); "" for gaps
  std::vector<std::pair<std::string, std::string>> merges;  ///< in rank order (rank 0 first)
  std::vector<AddedToken> added;    ///< matched in the raw text before pre-tokenization
  PreTokenizer pre = PreTokenizer::gpt2;
  bool add_prefix_space = false;    ///< ByteLevel add_prefix_space: prepend " " to each piece between added tokens that does not start with one
  std::optional<int> bos;           ///< prepended by encode(text, add_bos=true)
  std::optional<int> eos;
  std::optional<int> unk;           ///< used for a byte with no token (never in byte-level vocabularies)
  std::vector<int> extra_stop_ids;  ///< besides eos (e.g. <|im_end|>, <|eot_id|>)
};

/// Builds the tokenizer. Merges whose parts or result are not tokens are ignored (the tokens
/// are what the model was trained on). Throws EngineError when the vocabulary is empty or an
/// added token / bos / eos id is negative or empty.
std::shared_ptr<const Tokenizer> make_bpe_tokenizer(BpeVocab vocab);

/// Ids a tokenizer.json may use when no model bounds them: 2^24 (a real vocabulary has at most
/// a few hundred thousand; every id sizes per-token tables).
inline constexpr int kMaxTokenizerIds = 1 << 24;

/// Reads the vocabulary of a Hugging Face tokenizer.json (see load_tokenizer_json). `max_ids` > 0
/// is the model's vocab_size (embedding rows): a vocab or added-token id at or beyond it is an
/// error naming the field; 0 bounds ids by kMaxTokenizerIds.
BpeVocab read_tokenizer_json(const std::filesystem::path& path, int max_ids = 0);

/// Loads a Hugging Face tokenizer.json (model.type "BPE", ByteLevel pre-tokenizer/decoder).
/// BOS comes from a TemplateProcessing post-processor; EOS/BOS from tokenizer_config.json
/// beside the file when present (eos_token, bos_token, add_bos_token), else the first of
/// <|endoftext|>, <|end_of_text|>, </s> that exists. Stop ids: EOS plus <|im_end|>,
/// <|endoftext|>, <|eot_id|>, <|eom_id|>, <|end_of_text|> when present. Throws EngineError
/// naming the file, the field and the bad value (unsupported model/normalizer/pre_tokenizer
/// types, a split regex we do not implement, malformed entries, a merge whose parts or result are
/// not in model.vocab as Hugging Face tokenizers refuses it, ids beyond `max_ids` (see
/// read_tokenizer_json), JSON nested deeper than 256 levels, a tokenizer_config.json that is not
/// an object).
std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::filesystem::path& path, int max_ids = 0);

}  // namespace atlas::engine
