#pragma once
// Tokenizer interface shared by SentencePiece-style BPE (llama2.c tok*.bin, GGUF "llama") and
// byte-level BPE (tokenizer.json: GPT-2 / Qwen / Llama-3).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace atlas::engine {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  /// Text -> ids. `add_bos` prepends BOS when the tokenizer has one.
  virtual std::vector<int> encode(std::string_view text, bool add_bos) const = 0;
  /// encode(), giving up as soon as the ids would be more than `max_ids` (BOS counted): nullopt
  /// then. A server asks so that a prompt which cannot fit its context costs the tokenising of
  /// the part that shows it, not of the whole text. This default encodes everything and counts;
  /// the byte-level BPE stops early, as it works a pre-token at a time. SentencePiece merges
  /// pairs anywhere in the text, so no count is final before the end: its work stays bounded
  /// by the server's byte bound alone (its pieces are short, so that bound is tight).
  virtual std::optional<std::vector<int>> encode_at_most(std::string_view text, bool add_bos, std::size_t max_ids) const;
  /// The raw bytes token `id` contributes when it follows `prev` (SentencePiece drops the
  /// leading space of the piece right after BOS; byte tokens yield their byte). May be a
  /// partial UTF-8 sequence: use StreamDecoder to print. An id at or beyond vocab_size() is an
  /// empty piece, not an error: a model's embedding may have more rows than its tokenizer has
  /// tokens (Qwen3 pads 151,669 tokens to 151,936 rows), so sampling can emit an id with no token;
  /// Hugging Face's decode skips such ids the same way (the id stays in the output ids). A
  /// negative id throws EngineError.
  virtual std::string token_bytes(int prev, int id) const = 0;
  virtual int vocab_size() const = 0;
  virtual std::optional<int> bos_id() const = 0;
  virtual std::optional<int> eos_id() const = 0;
  /// Ids that end generation (EOS, and e.g. <|im_end|>).
  virtual std::vector<int> stop_ids() const = 0;
  /// The id of an exact piece/special token string, if any.
  virtual std::optional<int> piece_to_id(std::string_view piece) const = 0;

  /// Decodes ids to bytes; `prev` is the id before ids[0] (or -1).
  std::string decode(std::span<const int> ids, int prev = -1) const;
};

/// Turns a stream of token ids into text, holding back an incomplete UTF-8 sequence until the
/// bytes that complete it arrive (a code point may span tokens with byte fallback).
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok, int prev = -1) : tok_(&tok), prev_(prev) {}
  /// Returns the text that is complete after `id`.
  std::string push(int id);
  /// Returns whatever is held back (invalid bytes are emitted as-is).
  std::string flush();

 private:
  const Tokenizer* tok_;
  int prev_;
  std::string pending_;
};

}  // namespace atlas::engine
