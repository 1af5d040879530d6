#include "suites/prompt_builder.hpp"

#include <algorithm>
#include <string>

#include "suites/error.hpp"

namespace atlas::suites {

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t SplitMix64::below(std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  for (;;) {
    const std::uint64_t v = next();
    if (v < limit) return v % n;
  }
}

std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  SplitMix64 g(a ^ (b * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
  return g.next();
}

namespace {
bool printable_text(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (c < 0x20 && c != '\n') return false;  // control bytes
    if (c == 0x7f) return false;
    if (c >= 0x80) return false;  // a lone piece of a multi-byte sequence may not decode
  }
  return true;
}
}  // namespace

std::vector<int> ordinary_token_ids(const engine::Tokenizer& tok) {
  std::vector<int> special = tok.stop_ids();
  if (auto b = tok.bos_id()) special.push_back(*b);
  if (auto e = tok.eos_id()) special.push_back(*e);
  std::vector<int> ids;
  for (int id = 0; id < tok.vocab_size(); ++id) {
    if (std::find(special.begin(), special.end(), id) != special.end()) continue;
    // `prev` = id itself, an ordinary predecessor: SentencePiece only strips the leading space
    // right after BOS.
    if (printable_text(tok.token_bytes(id, id))) ids.push_back(id);
  }
  if (ids.empty()) throw SuiteError("tokenizer has no ordinary (printable, non-special) token ids");
  return ids;
}

PromptBuilder::PromptBuilder(const engine::Tokenizer& tok) : tok_(&tok), ids_(ordinary_token_ids(tok)) {}

std::vector<int> PromptBuilder::filler(int length, std::uint64_t seed) const {
  if (length < 0) throw SuiteError("filler length must be >= 0, got " + std::to_string(length));
  SplitMix64 g(seed);
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(length));
  for (int i = 0; i < length; ++i) out.push_back(ids_[g.below(ids_.size())]);
  return out;
}

std::vector<int> PromptBuilder::prompt(int length, std::uint64_t seed) const {
  if (length < 1) throw SuiteError("prompt length must be >= 1, got " + std::to_string(length));
  std::vector<int> out;
  const auto bos = tok_->bos_id();
  if (bos) out.push_back(*bos);
  auto rest = filler(length - static_cast<int>(out.size()), seed);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

std::string decode_ids(const engine::Tokenizer& tok, std::span<const int> ids) {
  std::string s;
  int prev = -1;
  for (int id : ids) {
    s += tok.token_bytes(prev, id);
    prev = id;
  }
  return s;
}

}  // namespace atlas::suites
