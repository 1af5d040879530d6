#include "engine/tokenizer/byte_tokenizer.hpp"

#include <string>

#include "engine/error.hpp"

namespace atlas::engine {

namespace {

class ByteTokenizer final : public Tokenizer {
 public:
  explicit ByteTokenizer(int vocab_size) : vocab_size_(vocab_size) {}

  std::vector<int> encode(std::string_view text, bool add_bos) const override {
    std::vector<int> ids;
    ids.reserve(text.size() + 1);
    if (add_bos) ids.push_back(kBos);
    for (unsigned char b : text) ids.push_back(kFirstByte + b);
    return ids;
  }
  std::string token_bytes(int /*prev*/, int id) const override {
    if (id < 0) throw EngineError("byte tokenizer: token id " + std::to_string(id) + " is negative");
    if (id >= kFirstByte && id < kFirstByte + 256) return std::string(1, static_cast<char>(id - kFirstByte));
    return {};
  }
  int vocab_size() const override { return vocab_size_; }
  std::optional<int> bos_id() const override { return kBos; }
  std::optional<int> eos_id() const override { return std::nullopt; }
  std::vector<int> stop_ids() const override { return {}; }
  std::optional<int> piece_to_id(std::string_view piece) const override {
    if (piece == "<unk>") return 0;
    if (piece == "<s>") return kBos;
    if (piece == "</s>") return 2;
    if (piece.size() == 1) return kFirstByte + static_cast<unsigned char>(piece[0]);
    return std::nullopt;
  }

 private:
  static constexpr int kBos = 1, kFirstByte = 3;
  int vocab_size_;
};

}  // namespace

std::shared_ptr<const Tokenizer> make_byte_tokenizer(int vocab_size) {
  if (vocab_size < 259) throw EngineError("byte tokenizer: vocab_size " + std::to_string(vocab_size) + " < 259 (3 specials + 256 bytes)");
  return std::make_shared<const ByteTokenizer>(vocab_size);
}

}  // namespace atlas::engine
