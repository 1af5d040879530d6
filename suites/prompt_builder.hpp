#pragma once
// Deterministic synthetic prompts: token ids sampled from a tokenizer's ordinary vocabulary with
// a seeded generator (llama-bench also benchmarks on synthetic ids, not text). The same
// (tokenizer, length, seed) always gives the same ids on every platform: the generator is
// splitmix64, not a std:: distribution whose output is implementation-defined.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::suites {

/// splitmix64 (Steele, Lea, Flood 2014): a tiny, portable 64-bit generator.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  /// Uniform integer in [0, n), n > 0 (rejection sampling, so unbiased).
  std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t state_;
};

/// Mixes values into one seed (for per-length, per-turn sub-seeds).
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b);

/// Ids a synthetic prompt may use: every id that is not BOS/EOS/a stop id and whose bytes (after
/// an ordinary token) are non-empty printable text, so a decoded prompt reads like text.
/// Throws SuiteError when the vocabulary has no such id.
std::vector<int> ordinary_token_ids(const engine::Tokenizer& tok);

class PromptBuilder {
 public:
  explicit PromptBuilder(const engine::Tokenizer& tok);
  /// `length` ids in total: BOS first when the tokenizer has one, then ordinary ids drawn with
  /// `seed`. length >= 1. Throws SuiteError for length < 1.
  std::vector<int> prompt(int length, std::uint64_t seed) const;
  /// `length` ordinary ids (no BOS): filler for a message in the middle of a conversation.
  std::vector<int> filler(int length, std::uint64_t seed) const;
  std::span<const int> vocabulary() const { return ids_; }

 private:
  const engine::Tokenizer* tok_;
  std::vector<int> ids_;
};

/// Decodes ids to text through Tokenizer::token_bytes (for reports; bytes are passed through).
std::string decode_ids(const engine::Tokenizer& tok, std::span<const int> ids);

}  // namespace atlas::suites
