#include "engine/tokenizer/spm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <queue>
#include <unordered_map>

#include "engine/error.hpp"

namespace atlas::engine {

namespace {

constexpr std::string_view kWordMarker = "\xE2\x96\x81";  // U+2581 LOWER ONE EIGHTH BLOCK

std::string normalise_piece(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  for (std::size_t i = 0; i < piece.size();) {
    if (piece.substr(i, kWordMarker.size()) == kWordMarker) {
      out += ' ';
      i += kWordMarker.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

/// The byte a "<0xHH>" piece stands for, or -1.
int byte_of_piece(std::string_view p) {
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(p[3]), lo = hex(p[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(SpmVocab v, std::vector<int> stop_ids) : v_(std::move(v)), stop_ids_(std::move(stop_ids)) {
    const auto n = v_.pieces.size();
    if (n == 0) throw EngineError("spm tokenizer: the vocabulary is empty");
    if (v_.scores.size() != n) {
      throw EngineError("spm tokenizer: scores has " + std::to_string(v_.scores.size()) + " entries but pieces has " +
                        std::to_string(n));
    }
    if (!v_.types.empty() && v_.types.size() != n) {
      throw EngineError("spm tokenizer: types has " + std::to_string(v_.types.size()) + " entries but pieces has " +
                        std::to_string(n));
    }
    for (auto [field, id] : {std::pair{"bos", v_.bos}, {"eos", v_.eos}, {"unk", v_.unk}}) {
      if (id < 0 || static_cast<std::size_t>(id) >= n) {
        throw EngineError(std::string("spm tokenizer: ") + field + " id " + std::to_string(id) + " is outside the vocabulary of " +
                          std::to_string(n));
      }
    }
    byte_id_.fill(-1);
    byte_value_.assign(n, -1);
    control_.assign(n, false);
    for (std::size_t id = 0; id < n; ++id) {
      auto& piece = v_.pieces[id];
      piece = normalise_piece(piece);
      const int type = v_.types.empty() ? 0 : v_.types[id];
      const bool is_control = v_.types.empty() ? (static_cast<int>(id) == v_.bos || static_cast<int>(id) == v_.eos)
                                               : (type == static_cast<int>(SpmTokenType::control));
      control_[id] = is_control;
      const int b = byte_of_piece(piece);
      if (b < 0 && !v_.types.empty() && type == static_cast<int>(SpmTokenType::byte))
        throw EngineError("spm tokenizer: token id " + std::to_string(id) + " is BYTE-typed but its text \"" + piece + "\" is not <0xHH>");
      if (b >= 0 && (v_.types.empty() || type == static_cast<int>(SpmTokenType::byte))) {
        byte_value_[id] = b;
        if (byte_id_[static_cast<std::size_t>(b)] < 0) byte_id_[static_cast<std::size_t>(b)] = static_cast<int>(id);
      }
      // GGUF control/unknown pieces are never produced from text; llama2.c (no types) looks up
      // every piece, and its control pieces ("\n<s>\n") cannot arise from code points.
      const bool lookable = v_.types.empty() || (type != static_cast<int>(SpmTokenType::control) &&
                                                 type != static_cast<int>(SpmTokenType::unknown));
      if (lookable) lookup_.emplace(piece, static_cast<int>(id));  // first id wins on duplicates
    }
  }

  std::vector<int> encode(std::string_view text, bool add_bos) const override {
    std::vector<int> out;
    if (add_bos) out.push_back(v_.bos);
    // run.c looks the dummy prefix " " up like any code point, so prepending it is the same
    // (and gives byte fallback should a vocabulary lack a plain space piece).
    std::string prefixed;
    if (!text.empty() && v_.add_space_prefix) {
      prefixed.reserve(text.size() + 1);
      prefixed += ' ';
      prefixed += text;
      text = prefixed;
    }
    std::vector<int> tokens;
    // One token per UTF-8 code point (run.c: a lead byte plus up to 3 continuation bytes).
    for (std::size_t i = 0; i < text.size();) {
      std::size_t len = 1;
      while (i + len < text.size() && len < 4 && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
      const std::string_view cp = text.substr(i, len);
      if (auto id = find(cp)) {
        tokens.push_back(*id);
      } else {
        for (char c : cp) {
          const int b = byte_id_[static_cast<unsigned char>(c)];
          tokens.push_back(b >= 0 ? b : v_.unk);
        }
      }
      i += len;
    }
    merge(tokens);
    out.insert(out.end(), tokens.begin(), tokens.end());
    return out;
  }

  std::string token_bytes(int prev, int id) const override {
    if (id < 0) throw EngineError("spm tokenizer: token id " + std::to_string(id) + " is negative");
    if (static_cast<std::size_t>(id) >= v_.pieces.size()) return {};  // an embedding row with no token (see Tokenizer::token_bytes)
    const auto uid = static_cast<std::size_t>(id);
    if (control_[uid]) return {};
    if (byte_value_[uid] >= 0) return std::string(1, static_cast<char>(byte_value_[uid]));
    std::string_view piece = v_.pieces[uid];
    if (prev == v_.bos && !piece.empty() && piece[0] == ' ') piece.remove_prefix(1);
    return std::string(piece);
  }

  int vocab_size() const override { return static_cast<int>(v_.pieces.size()); }
  std::optional<int> bos_id() const override { return v_.bos; }
  std::optional<int> eos_id() const override { return v_.eos; }
  std::vector<int> stop_ids() const override { return stop_ids_; }
  std::optional<int> piece_to_id(std::string_view piece) const override {
    const std::string p = normalise_piece(piece);
    for (std::size_t id = 0; id < v_.pieces.size(); ++id) {
      if (v_.pieces[id] == p) return static_cast<int>(id);
    }
    return std::nullopt;
  }

 private:
  std::optional<int> find(std::string_view s) const {
    auto it = lookup_.find(std::string(s));
    if (it == lookup_.end()) return std::nullopt;
    return it->second;
  }

  /// BPE merges in run.c's order — the best score first, the leftmost pair on a tie — with a
  /// heap over a linked list instead of run.c's rescans (O(n log n) instead of O(n^2)).
  void merge(std::vector<int>& tokens) const {
    const int n = static_cast<int>(tokens.size());
    if (n < 2) return;
    std::vector<int> prev(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      prev[static_cast<std::size_t>(i)] = i - 1;
      next[static_cast<std::size_t>(i)] = i + 1 < n ? i + 1 : -1;
    }
    struct Pair {
      float score;
      int left, right, left_id, right_id, merged;
    };
    auto worse = [](const Pair& a, const Pair& b) { return a.score < b.score || (a.score == b.score && a.left > b.left); };
    std::priority_queue<Pair, std::vector<Pair>, decltype(worse)> heap(worse);
    auto consider = [&](int l, int r) {
      if (l < 0 || r < 0) return;
      const int a = tokens[static_cast<std::size_t>(l)], b = tokens[static_cast<std::size_t>(r)];
      if (auto m = find(v_.pieces[static_cast<std::size_t>(a)] + v_.pieces[static_cast<std::size_t>(b)])) {
        heap.push({v_.scores[static_cast<std::size_t>(*m)], l, r, a, b, *m});
      }
    };
    for (int i = 0; i + 1 < n; ++i) consider(i, i + 1);
    std::vector<bool> alive(static_cast<std::size_t>(n), true);
    while (!heap.empty()) {
      const Pair p = heap.top();
      heap.pop();
      const auto l = static_cast<std::size_t>(p.left), r = static_cast<std::size_t>(p.right);
      if (!alive[l] || !alive[r] || next[l] != p.right || tokens[l] != p.left_id || tokens[r] != p.right_id) continue;
      tokens[l] = p.merged;
      alive[r] = false;
      next[l] = next[r];
      if (next[r] >= 0) prev[static_cast<std::size_t>(next[r])] = p.left;
      consider(prev[l], p.left);
      consider(p.left, next[l]);
    }
    std::vector<int> merged;
    for (int i = 0; i >= 0; i = next[static_cast<std::size_t>(i)]) merged.push_back(tokens[static_cast<std::size_t>(i)]);
    tokens = std::move(merged);
  }

  SpmVocab v_;
  std::vector<int> stop_ids_;
  std::unordered_map<std::string, int> lookup_;
  std::array<int, 256> byte_id_{};
  std::vector<int> byte_value_;
  std::vector<bool> control_;
};

}  // namespace

std::shared_ptr<const Tokenizer> make_spm_tokenizer(SpmVocab vocab) {
  std::vector<int> stops{vocab.eos};
  return std::make_shared<SpmTokenizer>(std::move(vocab), std::move(stops));
}

std::shared_ptr<const Tokenizer> load_llama2c_tokenizer(const std::filesystem::path& tok_bin, int vocab_size) {
  const std::string name = tok_bin.string();
  std::ifstream in(tok_bin, std::ios::binary);
  if (!in) throw EngineError(name + ": cannot open tokenizer file");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (vocab_size <= 0) throw EngineError(name + ": vocab_size = " + std::to_string(vocab_size) + " is invalid (must be > 0)");
  std::size_t at = 0;
  auto read_i32 = [&](const std::string& field) {
    if (at + 4 > bytes.size()) {
      throw EngineError(name + ": truncated at byte " + std::to_string(at) + " reading " + field + " (file has " +
                        std::to_string(bytes.size()) + " bytes)");
    }
    std::int32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    at += 4;
    return v;
  };
  const std::int32_t max_len = read_i32("max_token_length");
  if (max_len <= 0) throw EngineError(name + ": max_token_length = " + std::to_string(max_len) + " is invalid (must be > 0)");
  SpmVocab v;
  // Each entry takes at least 8 bytes (score, length): reserve no more than the file can hold
  // (vocab_size comes from the model header, up to 2^22).
  const std::size_t fits = std::min(static_cast<std::size_t>(vocab_size), bytes.size() / 8);
  v.pieces.reserve(fits);
  v.scores.reserve(fits);
  for (int id = 0; id < vocab_size; ++id) {
    const std::string tok = "token " + std::to_string(id);
    const std::int32_t score_bits = read_i32(tok + " score");
    float score;
    std::memcpy(&score, &score_bits, 4);
    // A NaN merge priority has no order: run.c never merges such a piece, our merge heap would
    // break its ordering. A corrupt file (real vocabularies have finite scores).
    if (std::isnan(score)) throw EngineError(name + ": " + tok + " score is NaN");
    const std::int32_t len = read_i32(tok + " length");
    if (len < 0 || len > max_len) {
      throw EngineError(name + ": " + tok + " length = " + std::to_string(len) + " is invalid (must be in [0, " +
                        std::to_string(max_len) + "])");
    }
    if (at + static_cast<std::size_t>(len) > bytes.size()) {
      throw EngineError(name + ": truncated at byte " + std::to_string(at) + " reading " + tok + " bytes (length " +
                        std::to_string(len) + ", file has " + std::to_string(bytes.size()) + " bytes)");
    }
    v.pieces.emplace_back(bytes.data() + at, static_cast<std::size_t>(len));
    v.scores.push_back(score);
    at += static_cast<std::size_t>(len);
  }
  std::vector<int> stops{v.bos, v.eos};
  return std::make_shared<SpmTokenizer>(std::move(v), std::move(stops));
}

}  // namespace atlas::engine
