#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::engine {

std::string Tokenizer::decode(std::span<const int> ids, int prev) const {
  std::string out;
  for (int id : ids) {
    out += token_bytes(prev, id);
    prev = id;
  }
  return out;
}

std::optional<std::vector<int>> Tokenizer::encode_at_most(std::string_view text, bool add_bos, std::size_t max_ids) const {
  std::vector<int> ids = encode(text, add_bos);
  if (ids.size() > max_ids) return std::nullopt;
  return ids;
}

namespace {
/// Length of the UTF-8 sequence a lead byte announces; 0 for a byte that cannot start one.
std::size_t utf8_length(unsigned char b) {
  if (b < 0x80) return 1;
  if ((b >> 5) == 0x6) return 2;
  if ((b >> 4) == 0xE) return 3;
  if ((b >> 3) == 0x1E) return 4;
  return 0;
}
bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }
}  // namespace

std::string StreamDecoder::push(int id) {
  pending_ += tok_->token_bytes(prev_, id);
  prev_ = id;
  // Emit everything up to the start of a trailing, still-valid but incomplete sequence.
  std::size_t i = 0;
  const std::size_t n = pending_.size();
  while (i < n) {
    const auto b = static_cast<unsigned char>(pending_[i]);
    const std::size_t len = utf8_length(b);
    if (len <= 1) {  // ASCII, or an invalid byte emitted as-is
      ++i;
      continue;
    }
    std::size_t have = 1;
    while (have < len && i + have < n && is_continuation(static_cast<unsigned char>(pending_[i + have]))) ++have;
    if (have == len) {
      i += len;
    } else if (i + have == n) {
      break;  // incomplete so far: wait for the next token
    } else {
      ++i;  // broken sequence: emit the lead byte as-is
    }
  }
  std::string out = pending_.substr(0, i);
  pending_.erase(0, i);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace atlas::engine
