#include "engine/tokenizer/bpe.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <queue>
#include <unordered_map>

#include "engine/error.hpp"
#include "engine/tokenizer/unicode.hpp"

namespace atlas::engine {

using unicode::decode_utf8;

const char* to_string(PreTokenizer p) {
  switch (p) {
    case PreTokenizer::gpt2: return "gpt2";
    case PreTokenizer::llama3: return "llama3";
    case PreTokenizer::qwen2: return "qwen2";
  }
  return "?";
}

namespace {
constexpr std::string_view kGpt2Regex = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
}  // namespace

std::optional<PreTokenizer> pre_tokenizer_from_regex(std::string_view pattern) {
  if (pattern == kGpt2Regex) return PreTokenizer::gpt2;
  if (pattern == kLlama3Regex) return PreTokenizer::llama3;
  if (pattern == kQwen2Regex) return PreTokenizer::qwen2;
  return std::nullopt;
}

std::optional<PreTokenizer> pre_tokenizer_from_gguf_name(std::string_view name) {
  if (name == "gpt2" || name == "gpt-2" || name == "default") return PreTokenizer::gpt2;
  if (name == "llama-bpe" || name == "llama3") return PreTokenizer::llama3;
  if (name == "qwen2") return PreTokenizer::qwen2;
  return std::nullopt;
}

// ---- pre-tokenizer: the regexes above, alternative by alternative (leftmost-first) ----

namespace {

enum class Cls : std::uint8_t { letter, number, space, other };

struct Cp {
  char32_t cp;
  std::size_t off;  // byte offset in the text
  Cls cls;
};

std::vector<Cp> classify(std::string_view text) {
  std::vector<Cp> out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto d = decode_utf8(text, i);
    Cls c = Cls::other;
    if (d.valid) {
      if (unicode::is_letter(d.cp)) c = Cls::letter;
      else if (unicode::is_number(d.cp)) c = Cls::number;
      else if (unicode::is_whitespace(d.cp)) c = Cls::space;
    }
    out.push_back({d.valid ? d.cp : 0xFFFFFFFFu, i, c});
    i += static_cast<std::size_t>(d.len);
  }
  return out;
}

char32_t ascii_lower(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c == 0x17F) return 's';  // LATIN SMALL LETTER LONG S case-folds to s
  return c;
}

/// Length in code points of a contraction ('s 't 're 've 'm 'll 'd) at i, or 0.
std::size_t contraction(const std::vector<Cp>& c, std::size_t i, bool ignore_case) {
  const std::size_t n = c.size();
  if (c[i].cp != '\'' || i + 1 >= n) return 0;
  auto at = [&](std::size_t k) { return ignore_case ? ascii_lower(c[k].cp) : c[k].cp; };
  const char32_t a = at(i + 1);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 < n) {
    const char32_t b = at(i + 2);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  }
  return 0;
}

bool is_crlf(char32_t cp) { return cp == '\r' || cp == '\n'; }

/// End (exclusive) of the whitespace run starting at i.
std::size_t space_run(const std::vector<Cp>& c, std::size_t i) {
  while (i < c.size() && c[i].cls == Cls::space) ++i;
  return i;
}

std::size_t run(const std::vector<Cp>& c, std::size_t i, Cls cls) {
  while (i < c.size() && c[i].cls == cls) ++i;
  return i;
}

/// \s+(?!\S) then \s+ at a whitespace position i: the run, minus its last character when a
/// non-space follows and the run is longer than one.
std::size_t trailing_space_rule(const std::vector<Cp>& c, std::size_t i) {
  const std::size_t e = space_run(c, i);
  if (e == c.size() || e - i < 2) return e;
  return e - 1;
}

std::size_t match_gpt2(const std::vector<Cp>& c, std::size_t i) {
  if (std::size_t k = contraction(c, i, false)) return i + k;
  const std::size_t j = c[i].cp == ' ' && i + 1 < c.size() ? i + 1 : i;
  if (c[j].cls != Cls::space) return run(c, j, c[j].cls);  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+'
  return trailing_space_rule(c, i);
}

std::size_t match_llama3_qwen2(const std::vector<Cp>& c, std::size_t i, std::size_t max_digits) {
  const std::size_t n = c.size();
  if (std::size_t k = contraction(c, i, true)) return i + k;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c[i].cls == Cls::letter) return run(c, i, Cls::letter);
  if (c[i].cls != Cls::number && !is_crlf(c[i].cp) && i + 1 < n && c[i + 1].cls == Cls::letter) return run(c, i + 1, Cls::letter);
  // \p{N}{1,max_digits}
  if (c[i].cls == Cls::number) {
    std::size_t j = i;
    while (j < n && j - i < max_digits && c[j].cls == Cls::number) ++j;
    return j;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const std::size_t j = c[i].cp == ' ' && i + 1 < n ? i + 1 : i;
  if (c[j].cls == Cls::other) {
    std::size_t e = run(c, j, Cls::other);
    while (e < n && is_crlf(c[e].cp)) ++e;
    return e;
  }
  // \s*[\r\n]+ : through the last CR/LF of the whitespace run
  const std::size_t e = space_run(c, i);
  for (std::size_t k = e; k > i; --k) {
    if (is_crlf(c[k - 1].cp)) return k;
  }
  return trailing_space_rule(c, i);
}

}  // namespace

std::vector<std::string_view> pre_tokenize(PreTokenizer p, std::string_view text) {
  const std::vector<Cp> c = classify(text);
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i < c.size();) {
    std::size_t e = 0;
    switch (p) {
      case PreTokenizer::gpt2: e = match_gpt2(c, i); break;
      case PreTokenizer::llama3: e = match_llama3_qwen2(c, i, 3); break;
      case PreTokenizer::qwen2: e = match_llama3_qwen2(c, i, 1); break;
    }
    const std::size_t begin = c[i].off, end = e < c.size() ? c[e].off : text.size();
    out.push_back(text.substr(begin, end - begin));
    i = e;
  }
  return out;
}

std::vector<std::string_view> pre_token_segments(std::string_view text, std::size_t target_bytes) {
  std::vector<std::string_view> out;
  const auto graphic_ascii = [](char c) { return c > ' ' && c < 0x7F; };
  for (std::size_t begin = 0; begin < text.size();) {
    std::size_t end = begin + std::max<std::size_t>(target_bytes, 1);
    while (end < text.size() && !(text[end] == ' ' && graphic_ascii(text[end - 1]))) ++end;
    end = std::min(end, text.size());
    out.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return out;
}

// ---- byte-level alphabet ----

namespace {
struct ByteMap {
  std::array<std::string, 256> to_unicode;
  std::unordered_map<char32_t, int> to_byte;
  ByteMap() {
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++);
      unicode::append_utf8(to_unicode[static_cast<std::size_t>(b)], cp);
      to_byte[cp] = b;
    }
  }
};
const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}
}  // namespace

const std::string& byte_to_unicode(unsigned char b) { return byte_map().to_unicode[b]; }

int unicode_to_byte(char32_t cp) {
  const auto& m = byte_map().to_byte;
  auto it = m.find(cp);
  return it == m.end() ? -1 : it->second;
}

// ---- the tokenizer ----

namespace {

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(BpeVocab v) : v_(std::move(v)) {
    if (v_.tokens.empty()) throw EngineError("BPE tokenizer: empty vocabulary");
    int max_id = static_cast<int>(v_.tokens.size()) - 1;
    for (const auto& a : v_.added) {
      if (a.id < 0 || a.content.empty()) throw EngineError("BPE tokenizer: added token '" + a.content + "' has id " + std::to_string(a.id));
      max_id = std::max(max_id, a.id);
    }
    vocab_size_ = max_id + 1;
    for (auto id : {v_.bos, v_.eos, v_.unk}) {
      if (id && (*id < 0 || *id >= vocab_size_)) throw EngineError("BPE tokenizer: special id " + std::to_string(*id) + " outside the vocabulary");
    }

    // Decoded bytes of every id.
    bytes_.resize(static_cast<std::size_t>(vocab_size_));
    for (std::size_t id = 0; id < v_.tokens.size(); ++id) {
      const std::string& t = v_.tokens[id];
      if (t.empty()) continue;
      token_ids_.emplace(t, static_cast<int>(id));
      std::string& out = bytes_[id];
      for (std::size_t i = 0; i < t.size();) {
        const auto d = decode_utf8(t, i);
        const int b = d.valid ? unicode_to_byte(d.cp) : -1;
        if (b >= 0) out += static_cast<char>(b);
        else out.append(t, i, static_cast<std::size_t>(d.len));
        i += static_cast<std::size_t>(d.len);
      }
    }
    for (const auto& a : v_.added) {
      bytes_[static_cast<std::size_t>(a.id)] = a.content;
      added_ids_.emplace(a.content, a.id);
    }
    for (int b = 0; b < 256; ++b) {
      auto it = token_ids_.find(byte_to_unicode(static_cast<unsigned char>(b)));
      byte_ids_[static_cast<std::size_t>(b)] = it == token_ids_.end() ? -1 : it->second;
    }
    for (std::size_t r = 0; r < v_.merges.size(); ++r) {
      const auto& [l, rt] = v_.merges[r];
      auto li = token_ids_.find(l), ri = token_ids_.find(rt), mi = token_ids_.find(l + rt);
      if (li == token_ids_.end() || ri == token_ids_.end() || mi == token_ids_.end()) continue;
      merges_.try_emplace(pair_key(li->second, ri->second), Merge{static_cast<int>(r), mi->second});
    }
    // Longest first, so leftmost-longest matching is "first match in this order".
    added_sorted_ = v_.added;
    std::stable_sort(added_sorted_.begin(), added_sorted_.end(),
                     [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
    for (const auto& a : added_sorted_) added_first_byte_[static_cast<unsigned char>(a.content[0])] = true;
    if (v_.eos) stop_ids_.push_back(*v_.eos);
    for (int id : v_.extra_stop_ids) {
      if (std::find(stop_ids_.begin(), stop_ids_.end(), id) == stop_ids_.end()) stop_ids_.push_back(id);
    }
  }

  std::vector<int> encode(std::string_view text, bool add_bos) const override {
    std::vector<int> ids;
    encode_into(text, add_bos, std::numeric_limits<std::size_t>::max(), ids);
    return ids;
  }

  std::optional<std::vector<int>> encode_at_most(std::string_view text, bool add_bos, std::size_t max_ids) const override {
    std::vector<int> ids;
    if (!encode_into(text, add_bos, max_ids, ids)) return std::nullopt;
    return ids;
  }

  std::string token_bytes(int /*prev*/, int id) const override {
    if (id < 0) throw EngineError("BPE tokenizer: token id " + std::to_string(id) + " is negative");
    if (id >= vocab_size_) return {};  // an embedding row with no token (see Tokenizer::token_bytes)
    return bytes_[static_cast<std::size_t>(id)];
  }
  int vocab_size() const override { return vocab_size_; }
  std::optional<int> bos_id() const override { return v_.bos; }
  std::optional<int> eos_id() const override { return v_.eos; }
  std::vector<int> stop_ids() const override { return stop_ids_; }
  std::optional<int> piece_to_id(std::string_view piece) const override {
    if (auto it = added_ids_.find(std::string(piece)); it != added_ids_.end()) return it->second;
    if (auto it = token_ids_.find(std::string(piece)); it != token_ids_.end()) return it->second;
    return std::nullopt;
  }

 private:
  struct Merge {
    int rank;
    int result;
  };
  struct AddedMatch {
    std::size_t text_begin, text_end;  // the ordinary text before it ends at text_begin
    int id;                            // -1: none (text_begin = size)
  };

  static std::uint64_t pair_key(int l, int r) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(l)) << 32 | static_cast<std::uint32_t>(r); }

  static bool word_char(std::string_view s, std::size_t i) {
    const auto d = decode_utf8(s, i);
    return d.valid && (unicode::is_letter(d.cp) || unicode::is_number(d.cp) || d.cp == '_');
  }
  static std::size_t prev_cp_start(std::string_view s, std::size_t i) {
    std::size_t k = i - 1;
    while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80 && i - k < 4) --k;
    return k;
  }

  /// The leftmost (then longest) added token at or after `from`.
  AddedMatch find_added(std::string_view text, std::size_t from) const {
    for (std::size_t pos = from; pos < text.size(); ++pos) {
      if (!added_first_byte_[static_cast<unsigned char>(text[pos])]) continue;
      for (const AddedToken& a : added_sorted_) {
        if (text.compare(pos, a.content.size(), a.content) != 0) continue;
        std::size_t b = pos, e = pos + a.content.size();
        if (a.single_word && ((b > 0 && word_char(text, prev_cp_start(text, b))) || (e < text.size() && word_char(text, e)))) continue;
        if (a.lstrip) {
          while (b > from) {
            const std::size_t k = prev_cp_start(text, b);
            if (!unicode::is_whitespace(decode_utf8(text, k).cp)) break;
            b = k;
          }
        }
        if (a.rstrip) {
          while (e < text.size()) {
            const auto d = decode_utf8(text, e);
            if (!d.valid || !unicode::is_whitespace(d.cp)) break;
            e += static_cast<std::size_t>(d.len);
          }
        }
        return {b, e, a.id};
      }
    }
    return {text.size(), text.size(), -1};
  }

  /// Appends text's ids to `ids`; false, having stopped, once they are more than `limit`.
  bool encode_into(std::string_view text, bool add_bos, std::size_t limit, std::vector<int>& ids) const {
    if (add_bos && v_.bos) ids.push_back(*v_.bos);
    std::size_t start = 0;
    while (start < text.size() && ids.size() <= limit) {
      const auto m = find_added(text, start);
      if (!encode_ordinary(text.substr(start, m.text_begin - start), ids, limit)) return false;
      if (m.id < 0) break;
      ids.push_back(m.id);
      start = m.text_end;
    }
    return ids.size() <= limit;
  }

  /// Text between added tokens, a segment at a time (pre_token_segments: the same pre-tokens as
  /// the whole text); false once the ids are more than `limit`, the rest not pre-tokenised.
  bool encode_ordinary(std::string_view text, std::vector<int>& ids, std::size_t limit) const {
    if (text.empty()) return true;
    // HF ByteLevel(add_prefix_space) works on each piece between added tokens separately.
    std::string prefixed;
    if (v_.add_prefix_space && text[0] != ' ') {
      prefixed.reserve(text.size() + 1);
      prefixed += ' ';
      prefixed += text;
      text = prefixed;
    }
    for (std::string_view segment : pre_token_segments(text, kSegmentBytes)) {
      for (std::string_view piece : pre_tokenize(v_.pre, segment)) {
        bpe(piece, ids);
        if (ids.size() > limit) return false;
      }
    }
    return true;
  }

  /// What one segment costs before any id comes out: its code-point table (24 bytes a code
  /// point, 1.5 MB at this size; more where no boundary comes soon) and its pre-tokenising.
  static constexpr std::size_t kSegmentBytes = 64 * 1024;

  /// Ranked merges over one pre-token (HF tokenizers' Word::merge_all: a heap of candidate
  /// pairs ordered by (rank, position); stale entries are skipped when popped).
  void bpe(std::string_view piece, std::vector<int>& ids) const {
    struct Sym {
      int id, prev, next;
    };
    std::vector<Sym> s;
    s.reserve(piece.size());
    for (unsigned char b : piece) {
      int id = byte_ids_[b];
      if (id < 0) {
        if (!v_.unk) continue;
        id = *v_.unk;
      }
      const int k = static_cast<int>(s.size());
      s.push_back({id, k - 1, k + 1});
    }
    if (s.empty()) return;
    s.back().next = -1;
    if (s.size() > 1) {
      struct Cand {
        int rank, pos, left, right, result;
        bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
      };
      std::priority_queue<Cand, std::vector<Cand>, std::greater<>> heap;
      auto push = [&](int pos) {
        if (pos < 0 || s[static_cast<std::size_t>(pos)].next < 0) return;
        const Sym& a = s[static_cast<std::size_t>(pos)];
        const Sym& b = s[static_cast<std::size_t>(a.next)];
        auto it = merges_.find(pair_key(a.id, b.id));
        if (it != merges_.end()) heap.push({it->second.rank, pos, a.id, b.id, it->second.result});
      };
      for (int i = 0; i + 1 < static_cast<int>(s.size()); ++i) push(i);
      while (!heap.empty()) {
        const Cand c = heap.top();
        heap.pop();
        Sym& a = s[static_cast<std::size_t>(c.pos)];
        if (a.id != c.left || a.next < 0) continue;  // stale: `a` was merged away or changed
        Sym& b = s[static_cast<std::size_t>(a.next)];
        if (b.id != c.right) continue;
        a.id = c.result;
        b.id = -1;  // removed
        a.next = b.next;
        if (b.next >= 0) s[static_cast<std::size_t>(b.next)].prev = c.pos;
        push(a.prev);
        push(c.pos);
      }
    }
    for (int i = 0; i >= 0; i = s[static_cast<std::size_t>(i)].next) ids.push_back(s[static_cast<std::size_t>(i)].id);
  }

  BpeVocab v_;
  int vocab_size_ = 0;
  std::vector<std::string> bytes_;
  std::unordered_map<std::string, int> token_ids_;
  std::unordered_map<std::string, int> added_ids_;
  std::array<int, 256> byte_ids_{};
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::vector<AddedToken> added_sorted_;
  std::array<bool, 256> added_first_byte_{};
  std::vector<int> stop_ids_;
};

}  // namespace

std::shared_ptr<const Tokenizer> make_bpe_tokenizer(BpeVocab vocab) { return std::make_shared<const BpeTokenizer>(std::move(vocab)); }

}  // namespace atlas::engine
