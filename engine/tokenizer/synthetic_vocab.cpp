#include "engine/tokenizer/synthetic_vocab.hpp"

#include "engine/error.hpp"

namespace atlas::engine {

BpeVocab synthetic_bpe_vocab(int vocab_size) {
  if (vocab_size < kMinSyntheticVocab) {
    throw EngineError("synthetic tokenizer: vocab_size " + std::to_string(vocab_size) + " is below the " +
                      std::to_string(kMinSyntheticVocab) + " tokens it needs (<|endoftext|> and the ASCII characters)");
  }
  BpeVocab v;
  v.pre = PreTokenizer::gpt2;
  v.tokens.reserve(static_cast<std::size_t>(vocab_size));
  v.tokens.push_back("<|endoftext|>");
  v.added.push_back({"<|endoftext|>", 0, true, false, false, false});
  v.bos = 0;
  v.eos = 0;
  for (int b = 0x20; b < 0x7f; ++b) v.tokens.push_back(byte_to_unicode(static_cast<unsigned char>(b)));
  v.tokens.push_back(byte_to_unicode('\n'));
  v.tokens.push_back(byte_to_unicode('\t'));
  // Merged pieces, breadth first: level 2 = {"Ġ", a..z} x a..z, then each piece of the level
  // before followed by a letter, until the vocabulary is full.
  const std::string space = byte_to_unicode(' ');
  std::vector<std::string> level = {space};
  for (char c = 'a'; c <= 'z'; ++c) level.emplace_back(1, c);
  while (static_cast<int>(v.tokens.size()) < vocab_size) {
    std::vector<std::string> next;
    for (const auto& left : level) {
      for (char c = 'a'; c <= 'z' && static_cast<int>(v.tokens.size()) < vocab_size; ++c) {
        const std::string right(1, c);
        v.merges.emplace_back(left, right);
        v.tokens.push_back(left + right);
        next.push_back(left + right);
      }
    }
    level = std::move(next);
  }
  return v;
}

}  // namespace atlas::engine
