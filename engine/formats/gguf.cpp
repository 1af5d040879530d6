#include "engine/formats/gguf.hpp"

#include "engine/formats/qwen3_next_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/error.hpp"
#include "engine/formats/weight_builder.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "engine/tokenizer/byte_tokenizer.hpp"
#include "engine/tokenizer/spm.hpp"

namespace atlas::engine {

const char* to_string(GgufType t) {
  switch (t) {
    case GgufType::uint8: return "uint8";
    case GgufType::int8: return "int8";
    case GgufType::uint16: return "uint16";
    case GgufType::int16: return "int16";
    case GgufType::uint32: return "uint32";
    case GgufType::int32: return "int32";
    case GgufType::float32: return "float32";
    case GgufType::boolean: return "bool";
    case GgufType::string: return "string";
    case GgufType::array: return "array";
    case GgufType::uint64: return "uint64";
    case GgufType::int64: return "int64";
    case GgufType::float64: return "float64";
  }
  return "?";
}

namespace {

constexpr int kMaxArrayDepth = 8;  // arrays of arrays: deeper nesting is not a real file

const char* ggml_type_name(std::uint32_t t) {
  static const char* names[] = {"F32",  "F16",  "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K",
                                "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
                                "I8",   "I16",  "I32",  "I64",  "F64",  "IQ1_M", "BF16"};
  return t < std::size(names) ? names[t] : "unknown";
}

/// Bounds-checked little-endian reader over the mapped file.
class Cursor {
 public:
  Cursor(std::span<const std::byte> b, const std::filesystem::path& p) : b_(b), path_(p) {}
  std::uint64_t pos() const { return pos_; }
  std::uint64_t remaining() const { return b_.size() - pos_; }
  void set_field(std::string f) { field_ = std::move(f); }
  const std::string& field() const { return field_; }

  [[noreturn]] void fail(const std::string& what) const { throw EngineError(path_.string() + ": GGUF " + field_ + ": " + what); }

  template <class T>
  T read() {
    need(sizeof(T), "a " + std::to_string(sizeof(T)) + "-byte value");
    T v;
    std::memcpy(&v, b_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string() {
    const auto len = read<std::uint64_t>();
    if (len > remaining())
      fail("string length " + std::to_string(len) + " at byte offset " + std::to_string(pos_ - 8) + " runs past the end of the file (" +
           std::to_string(b_.size()) + " bytes)");
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), len);
    pos_ += len;
    return s;
  }

 private:
  void need(std::uint64_t n, const std::string& what) {
    if (n > remaining())
      fail("file truncated: " + what + " at byte offset " + std::to_string(pos_) + " runs past the end of the file (" + std::to_string(b_.size()) +
           " bytes)");
  }
  std::span<const std::byte> b_;
  const std::filesystem::path& path_;
  std::uint64_t pos_ = 0;
  std::string field_ = "header";
};

std::uint64_t min_value_bytes(GgufType t) {
  switch (t) {
    case GgufType::uint8: case GgufType::int8: case GgufType::boolean: return 1;
    case GgufType::uint16: case GgufType::int16: return 2;
    case GgufType::uint32: case GgufType::int32: case GgufType::float32: return 4;
    case GgufType::uint64: case GgufType::int64: case GgufType::float64: case GgufType::string: return 8;
    case GgufType::array: return 12;
  }
  return 1;
}

GgufType read_type(Cursor& c) {
  const auto t = c.read<std::uint32_t>();
  if (t > static_cast<std::uint32_t>(GgufType::float64)) c.fail("unknown value type " + std::to_string(t) + " (known: 0..12)");
  return static_cast<GgufType>(t);
}

GgufValue read_value(Cursor& c, GgufType t, int depth) {
  GgufValue v;
  v.type = t;
  switch (t) {
    case GgufType::uint8: v.value = std::uint64_t{c.read<std::uint8_t>()}; break;
    case GgufType::int8: v.value = std::int64_t{c.read<std::int8_t>()}; break;
    case GgufType::uint16: v.value = std::uint64_t{c.read<std::uint16_t>()}; break;
    case GgufType::int16: v.value = std::int64_t{c.read<std::int16_t>()}; break;
    case GgufType::uint32: v.value = std::uint64_t{c.read<std::uint32_t>()}; break;
    case GgufType::int32: v.value = std::int64_t{c.read<std::int32_t>()}; break;
    case GgufType::float32: v.value = double{c.read<float>()}; break;
    case GgufType::uint64: v.value = c.read<std::uint64_t>(); break;
    case GgufType::int64: v.value = c.read<std::int64_t>(); break;
    case GgufType::float64: v.value = c.read<double>(); break;
    case GgufType::boolean: {
      const auto b = c.read<std::uint8_t>();
      if (b > 1) c.fail("bool value " + std::to_string(b) + " (must be 0 or 1)");
      v.value = b != 0;
      break;
    }
    case GgufType::string: v.value = c.read_string(); break;
    case GgufType::array: {
      if (depth >= kMaxArrayDepth) c.fail("arrays nested deeper than " + std::to_string(kMaxArrayDepth));
      GgufValue::Array a;
      a.elem_type = read_type(c);
      const auto n = c.read<std::uint64_t>();
      if (n > c.remaining() / min_value_bytes(a.elem_type))
        c.fail("array length " + std::to_string(n) + " of " + to_string(a.elem_type) + " cannot fit in the " + std::to_string(c.remaining()) +
               " bytes left in the file");
      a.items.reserve(n);
      for (std::uint64_t i = 0; i < n; ++i) a.items.push_back(read_value(c, a.elem_type, depth + 1));
      v.value = std::move(a);
      break;
    }
  }
  return v;
}

std::string value_str(const GgufValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) return "\"" + x + "\"";
        else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, GgufValue::Array>) return "array[" + std::to_string(x.items.size()) + "]";
        else return std::to_string(x);
      },
      v.value);
}

}  // namespace

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = metadata.find(key);
  return it == metadata.end() ? nullptr : &it->second;
}

namespace {
[[noreturn]] void key_error(const GgufFile& f, const std::string& key, const std::string& what) {
  throw EngineError(f.path.string() + ": GGUF metadata key '" + key + "': " + what);
}
const GgufValue& need_key(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (!v) key_error(f, key, "missing");
  return *v;
}
}  // namespace

std::uint64_t GgufFile::get_uint(const std::string& key) const {
  const GgufValue& v = need_key(*this, key);
  if (auto* u = std::get_if<std::uint64_t>(&v.value)) return *u;
  if (auto* i = std::get_if<std::int64_t>(&v.value); i && *i >= 0) return static_cast<std::uint64_t>(*i);
  key_error(*this, key, std::string("expected a non-negative integer, got ") + to_string(v.type) + " " + value_str(v));
}

double GgufFile::get_float(const std::string& key) const {
  const GgufValue& v = need_key(*this, key);
  if (auto* d = std::get_if<double>(&v.value)) return *d;
  if (auto* u = std::get_if<std::uint64_t>(&v.value)) return static_cast<double>(*u);
  if (auto* i = std::get_if<std::int64_t>(&v.value)) return static_cast<double>(*i);
  key_error(*this, key, std::string("expected a number, got ") + to_string(v.type) + " " + value_str(v));
}

std::string GgufFile::get_string(const std::string& key) const {
  const GgufValue& v = need_key(*this, key);
  if (auto* s = std::get_if<std::string>(&v.value)) return *s;
  key_error(*this, key, std::string("expected a string, got ") + to_string(v.type) + " " + value_str(v));
}

bool GgufFile::get_bool(const std::string& key) const {
  const GgufValue& v = need_key(*this, key);
  if (auto* b = std::get_if<bool>(&v.value)) return *b;
  key_error(*this, key, std::string("expected a bool, got ") + to_string(v.type) + " " + value_str(v));
}

const GgufValue::Array& GgufFile::get_array(const std::string& key) const {
  const GgufValue& v = need_key(*this, key);
  if (auto* a = std::get_if<GgufValue::Array>(&v.value)) return *a;
  key_error(*this, key, std::string("expected an array, got ") + to_string(v.type) + " " + value_str(v));
}

std::span<const std::byte> GgufFile::tensor_data(const GgufTensorInfo& t) const {
  return map->bytes().subspan(static_cast<std::size_t>(data_offset + t.offset), static_cast<std::size_t>(t.nbytes));
}

GgufFile read_gguf(const std::filesystem::path& path) {
  GgufFile f;
  f.path = path;
  f.map = MappedFile::open_shared(path);
  const auto bytes = f.map->bytes();
  Cursor c(bytes, f.path);

  c.set_field("header field 'magic'");
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "GGUF", 4) != 0) {
    std::string got;
    for (std::size_t i = 0; i < std::min<std::size_t>(4, bytes.size()); ++i) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(bytes[i]));
      got += buf;
    }
    c.fail("expected \"GGUF\" (47475546), got " + (got.empty() ? std::string("an empty file") : got));
  }
  c.read<std::uint32_t>();
  c.set_field("header field 'version'");
  f.version = c.read<std::uint32_t>();
  if (f.version != 2 && f.version != 3) c.fail(std::to_string(f.version) + " is not supported (supported: 2, 3)");
  c.set_field("header field 'tensor_count'");
  const auto n_tensors = c.read<std::uint64_t>();
  c.set_field("header field 'metadata_kv_count'");
  const auto n_kv = c.read<std::uint64_t>();
  // Each key/value takes at least 13 bytes (8 length + 1 key byte + 4 type) and each tensor
  // info at least 28: a count that cannot fit in the file is corrupt.
  if (n_kv > c.remaining() / 13) c.fail(std::to_string(n_kv) + " key/values cannot fit in the " + std::to_string(bytes.size()) + "-byte file");
  c.set_field("header field 'tensor_count'");
  if (n_tensors > c.remaining() / 28) c.fail(std::to_string(n_tensors) + " tensors cannot fit in the " + std::to_string(bytes.size()) + "-byte file");

  for (std::uint64_t i = 0; i < n_kv; ++i) {
    c.set_field("metadata key #" + std::to_string(i));
    std::string key = c.read_string();
    if (key.empty()) c.fail("empty key (ggml rejects it too)");
    c.set_field("metadata key '" + key + "'");
    const GgufType t = read_type(c);
    GgufValue v = read_value(c, t, 0);
    if (!f.metadata.emplace(key, std::move(v)).second) c.fail("duplicate key");
  }
  if (const GgufValue* a = f.find("general.alignment")) {
    c.set_field("metadata key 'general.alignment'");
    const auto* u = std::get_if<std::uint64_t>(&a->value);
    if (!u || *u == 0 || (*u & (*u - 1)) != 0 || *u > (1u << 30)) c.fail("alignment " + value_str(*a) + " is not a power of two");
    f.alignment = *u;
  }

  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    c.set_field("tensor info #" + std::to_string(i));
    GgufTensorInfo t;
    t.name = c.read_string();
    c.set_field("tensor '" + t.name + "'");
    const auto n_dims = c.read<std::uint32_t>();
    if (n_dims == 0 || n_dims > 4) c.fail("n_dims " + std::to_string(n_dims) + " (must be 1..4)");
    std::int64_t n = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      const auto ne = c.read<std::int64_t>();
      if (ne <= 0) c.fail("dimension ne[" + std::to_string(d) + "] = " + std::to_string(ne) + " is invalid (must be > 0)");
      if (ne > std::numeric_limits<std::int64_t>::max() / n)
        c.fail("dimension ne[" + std::to_string(d) + "] = " + std::to_string(ne) + ": the element count overflows 64 bits");
      n *= ne;
      t.ne.push_back(ne);
    }
    t.ggml_type = c.read<std::uint32_t>();
    switch (t.ggml_type) {
      case kGgmlF32: t.dtype = DType::f32; break;
      case kGgmlF16: t.dtype = DType::f16; break;
      case kGgmlBF16: t.dtype = DType::bf16; break;
      case kGgmlQ8_0: t.dtype = DType::q8_0; break;
      default:
        c.fail(std::string("type ") + std::to_string(t.ggml_type) + " (" + ggml_type_name(t.ggml_type) + ") is not supported (supported: F32, F16, BF16, Q8_0)");
    }
    if (t.ne[0] % block_elements(t.dtype) != 0)
      c.fail(std::string("row length ne[0] = ") + std::to_string(t.ne[0]) + " is not a multiple of the " + to_string(t.dtype) + " block size");
    const auto nbytes = storage_bytes(t.dtype, n);  // n is a multiple of the block: only the byte count can overflow
    if (!nbytes)
      c.fail("size of " + std::to_string(n) + " " + to_string(t.dtype) + " elements overflows 64 bits: the tensor runs past the end of the data");
    t.nbytes = static_cast<std::uint64_t>(*nbytes);
    t.offset = c.read<std::uint64_t>();
    if (t.offset % f.alignment != 0) c.fail("offset " + std::to_string(t.offset) + " is not a multiple of the alignment " + std::to_string(f.alignment));
    f.tensors.push_back(std::move(t));
  }
  c.set_field("data section");
  f.data_offset = (c.pos() + f.alignment - 1) / f.alignment * f.alignment;
  if (f.data_offset > bytes.size() && !f.tensors.empty())
    c.fail("starts at byte " + std::to_string(f.data_offset) + ", past the end of the file (" + std::to_string(bytes.size()) + " bytes)");
  for (const auto& t : f.tensors) {
    const std::uint64_t avail = bytes.size() - std::min<std::uint64_t>(bytes.size(), f.data_offset);
    if (t.offset > avail || t.nbytes > avail - t.offset) {
      c.set_field("tensor '" + t.name + "'");
      c.fail("data at offset " + std::to_string(t.offset) + " + " + std::to_string(t.nbytes) + " bytes (absolute " + std::to_string(f.data_offset + t.offset) +
             ") runs past the end of the file (" + std::to_string(bytes.size()) + " bytes)");
    }
  }
  // No two tensors may share bytes: ggml requires each tensor at the running (aligned) end of the
  // previous one, so an overlap is a corrupt or crafted file, and would load one tensor as
  // another (attn_v silently equal to attn_k), as a replayed safetensors report showed
  // (fuzz/replay_reports.py, case st-alias).
  // Checked in offset order, naming the second tensor.
  std::vector<const GgufTensorInfo*> by_offset;
  for (const auto& t : f.tensors) by_offset.push_back(&t);
  std::stable_sort(by_offset.begin(), by_offset.end(), [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (std::size_t i = 1; i < by_offset.size(); ++i) {
    const GgufTensorInfo &prev = *by_offset[i - 1], &t = *by_offset[i];
    if (t.offset < prev.offset + prev.nbytes) {
      c.set_field("tensor '" + t.name + "'");
      c.fail("data [" + std::to_string(t.offset) + ", " + std::to_string(t.offset + t.nbytes) + ") overlaps tensor '" + prev.name + "' [" +
             std::to_string(prev.offset) + ", " + std::to_string(prev.offset + prev.nbytes) + ") (tensors may not share bytes)");
    }
  }
  return f;
}

namespace {

/// Reverses GGUF's ne0-first order into row-major outermost-first.
std::vector<std::int64_t> row_major(const std::vector<std::int64_t>& ne) { return {ne.rbegin(), ne.rend()}; }

int config_int(const GgufFile& f, const std::string& key) {
  const auto v = f.get_uint(key);
  if (v == 0 || v > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) key_error(f, key, "value " + std::to_string(v) + " is out of range");
  return static_cast<int>(v);
}

std::vector<std::string> string_array(const GgufFile& f, const std::string& key) {
  const auto& a = f.get_array(key);
  if (a.elem_type != GgufType::string) key_error(f, key, std::string("expected an array of string, got an array of ") + to_string(a.elem_type));
  std::vector<std::string> out;
  out.reserve(a.items.size());
  for (const auto& v : a.items) out.push_back(std::get<std::string>(v.value));
  return out;
}

std::optional<int> optional_id(const GgufFile& f, const std::string& key, std::size_t n_tokens) {
  if (!f.find(key)) return std::nullopt;
  const auto v = f.get_uint(key);
  if (v == 0xFFFFFFFFu) return std::nullopt;  // llama.cpp writes -1 as u32 for "none"
  if (v >= n_tokens) key_error(f, key, "id " + std::to_string(v) + " is outside the " + std::to_string(n_tokens) + "-token vocabulary");
  return static_cast<int>(v);
}

std::shared_ptr<const Tokenizer> gguf_tokenizer(const GgufFile& f) {
  if (!f.find("tokenizer.ggml.model")) return nullptr;
  const std::string kind = f.get_string("tokenizer.ggml.model");
  if (kind == "none" || kind == "no_vocab") return nullptr;  // llama.cpp: a model without a vocabulary
  std::vector<std::string> tokens = string_array(f, "tokenizer.ggml.tokens");
  std::vector<int> types;
  if (f.find("tokenizer.ggml.token_type")) {
    const auto& a = f.get_array("tokenizer.ggml.token_type");
    if (a.items.size() != tokens.size())
      key_error(f, "tokenizer.ggml.token_type", "has " + std::to_string(a.items.size()) + " entries for " + std::to_string(tokens.size()) + " tokens");
    for (const auto& v : a.items) {
      long long t = -1;
      if (auto* i = std::get_if<std::int64_t>(&v.value)) t = *i;
      else if (auto* u = std::get_if<std::uint64_t>(&v.value)) t = *u > 1000 ? 1000 : static_cast<long long>(*u);
      else key_error(f, "tokenizer.ggml.token_type", std::string("expected integers, got ") + to_string(v.type));
      // llama.cpp's llama_token_type: 0 undefined .. 6 byte; anything else is not a type.
      if (t < 0 || t > 6)
        key_error(f, "tokenizer.ggml.token_type", "token id " + std::to_string(types.size()) + " has type " + value_str(v) + " (known: 0..6)");
      types.push_back(static_cast<int>(t));
    }
  }
  if (kind == "llama") {
    SpmVocab v;
    const auto& sa = f.get_array("tokenizer.ggml.scores");
    if (sa.items.size() != tokens.size())
      key_error(f, "tokenizer.ggml.scores", "has " + std::to_string(sa.items.size()) + " entries for " + std::to_string(tokens.size()) + " tokens");
    for (const auto& s : sa.items) {
      auto* d = std::get_if<double>(&s.value);
      if (!d) key_error(f, "tokenizer.ggml.scores", std::string("expected floats, got ") + to_string(s.type));
      // A NaN merge priority has no order (the merge heap needs one); infinities are ordered.
      if (std::isnan(*d)) key_error(f, "tokenizer.ggml.scores", "token id " + std::to_string(v.scores.size()) + " has score NaN");
      v.scores.push_back(static_cast<float>(*d));
    }
    // SentencePiece marks word starts with U+2581; llama2.c's tok*.bin (and our SPM tokenizer)
    // use a plain space.
    for (auto& t : tokens) {
      std::string spaced;
      for (std::size_t i = 0; i < t.size(); ++i) {
        if (t.compare(i, 3, "\xE2\x96\x81") == 0) {
          spaced += ' ';
          i += 2;
        } else {
          spaced += t[i];
        }
      }
      t = std::move(spaced);
    }
    // A BYTE token stands for the byte its text spells; any other text would leave that byte
    // without a token (byte fallback silently maps it to unk).
    for (std::size_t i = 0; i < types.size(); ++i) {
      const std::string& t = tokens[i];
      auto hex = [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'F') || (ch >= 'a' && ch <= 'f'); };
      if (types[i] == static_cast<int>(SpmTokenType::byte) && !(t.size() == 6 && t.starts_with("<0x") && hex(t[3]) && hex(t[4]) && t[5] == '>'))
        key_error(f, "tokenizer.ggml.tokens", "token id " + std::to_string(i) + " is BYTE-typed (token_type 6) but its text \"" + t +
                                                   "\" is not <0xHH> (two hex digits)");
    }
    v.pieces = std::move(tokens);
    v.types = types.empty() ? std::vector<int>(v.pieces.size(), 1) : std::move(types);
    // Absent keys take llama.cpp's SentencePiece defaults (bos 1, eos 2, unk 0); "none" (-1) is an
    // error below: this tokenizer needs all three.
    auto id_or = [&](const char* key, int def) { return f.find(key) ? optional_id(f, key, v.pieces.size()).value_or(-1) : def; };
    v.bos = id_or("tokenizer.ggml.bos_token_id", 1);
    v.eos = id_or("tokenizer.ggml.eos_token_id", 2);
    v.unk = id_or("tokenizer.ggml.unknown_token_id", 0);
    if (f.find("tokenizer.ggml.add_space_prefix")) v.add_space_prefix = f.get_bool("tokenizer.ggml.add_space_prefix");
    if (v.eos < 0) key_error(f, "tokenizer.ggml.eos_token_id", "missing or none: a SentencePiece vocabulary needs one");
    if (v.bos < 0) key_error(f, "tokenizer.ggml.bos_token_id", "missing or none: a SentencePiece vocabulary needs one");
    if (v.unk < 0) key_error(f, "tokenizer.ggml.unknown_token_id", "missing or none: a SentencePiece vocabulary needs one");
    try {
      return make_spm_tokenizer(std::move(v));
    } catch (const EngineError& e) {
      throw EngineError(f.path.string() + ": " + e.what());
    }
  }
  if (kind == "gpt2") {
    BpeVocab v;
    const std::string pre_name = f.find("tokenizer.ggml.pre") ? f.get_string("tokenizer.ggml.pre") : "default";
    const auto pre = pre_tokenizer_from_gguf_name(pre_name);
    if (!pre) key_error(f, "tokenizer.ggml.pre", "\"" + pre_name + "\" has no split rule here (supported: default, gpt2, llama-bpe, qwen2)");
    v.pre = *pre;
    for (std::size_t i = 0; i < types.size(); ++i) {
      // llama.cpp token types: 3 control, 4 user-defined: matched as whole pieces in the text (an
      // empty one can never match: it stays an ordinary id that decodes to nothing).
      if ((types[i] == 3 || types[i] == 4) && !tokens[i].empty()) v.added.push_back({tokens[i], static_cast<int>(i), types[i] == 3, false, false, false});
    }
    for (const auto& m : string_array(f, "tokenizer.ggml.merges")) {
      const auto sp = m.find(' ', 1);
      if (sp == std::string::npos) key_error(f, "tokenizer.ggml.merges", "entry \"" + m + "\" is not \"left right\"");
      v.merges.emplace_back(m.substr(0, sp), m.substr(sp + 1));
    }
    const auto bos = optional_id(f, "tokenizer.ggml.bos_token_id", tokens.size());
    const bool add_bos = f.find("tokenizer.ggml.add_bos_token") ? f.get_bool("tokenizer.ggml.add_bos_token") : false;
    if (add_bos) v.bos = bos;
    v.eos = optional_id(f, "tokenizer.ggml.eos_token_id", tokens.size());
    if (auto eot = optional_id(f, "tokenizer.ggml.eot_token_id", tokens.size())) v.extra_stop_ids.push_back(*eot);
    for (const auto& a : v.added) {
      if (a.content == "<|im_end|>" || a.content == "<|endoftext|>" || a.content == "<|eot_id|>" || a.content == "<|eom_id|>") v.extra_stop_ids.push_back(a.id);
    }
    v.tokens = std::move(tokens);
    try {
      return make_bpe_tokenizer(std::move(v));
    } catch (const EngineError& e) {
      throw EngineError(f.path.string() + ": " + e.what());
    }
  }
  key_error(f, "tokenizer.ggml.model", "\"" + kind + "\" is not supported (supported: llama, gpt2)");
}

/// llama.cpp's qwen3next hyperparameters (src/models/qwen3next.cpp load_arch_hparams):
/// ssm.state_size = key (= value) head dim, ssm.group_count = key heads, ssm.time_step_rank =
/// value heads, ssm.inner_size = value heads x value head dim, ssm.conv_kernel,
/// full_attention_interval (default 4), expert_count / expert_used_count /
/// expert_feed_forward_length / expert_shared_feed_forward_length, rope.dimension_count (the
/// rotated dims of partial RoPE).
void read_qwen3next_keys(const GgufFile& f, ModelConfig& c) {
  const std::string a = "qwen3next.";
  const int state = config_int(f, a + "ssm.state_size");
  c.gdn_k_head_dim = state;
  c.gdn_k_heads = config_int(f, a + "ssm.group_count");
  c.gdn_v_heads = config_int(f, a + "ssm.time_step_rank");
  const int inner = config_int(f, a + "ssm.inner_size");
  if (inner % c.gdn_v_heads != 0)
    key_error(f, a + "ssm.inner_size", std::to_string(inner) + " is not a multiple of ssm.time_step_rank " + std::to_string(c.gdn_v_heads));
  c.gdn_v_head_dim = inner / c.gdn_v_heads;
  c.gdn_conv_kernel = config_int(f, a + "ssm.conv_kernel");
  const int interval = f.find(a + "full_attention_interval") ? config_int(f, a + "full_attention_interval") : 4;
  c.blocks = qwen3_next_blocks(c.n_layers, interval);
  c.n_experts = config_int(f, a + "expert_count");
  c.n_experts_used = config_int(f, a + "expert_used_count");
  c.expert_hidden_dim = config_int(f, a + "expert_feed_forward_length");
  c.shared_expert_hidden_dim = f.find(a + "expert_shared_feed_forward_length") ? config_int(f, a + "expert_shared_feed_forward_length") : 0;
  c.norm_topk_prob = f.find(a + "expert_weights_norm") ? f.get_bool(a + "expert_weights_norm") : true;  // llama.cpp: always true
  c.rope_dim = f.find(a + "rope.dimension_count") ? config_int(f, a + "rope.dimension_count") : c.head_dim / 4;
}

/// llama.cpp's current qwen3next converter writes each Gated DeltaNet input projection as
/// blk.N.attn_qkv ([q | k | v]) + blk.N.attn_gate (z) instead of the legacy grouped ssm_in; the
/// engine computes from the grouped form, so rebuild it (rows copied in the file's dtype, owned by
/// the model).
void split_qkv_to_grouped(Model& m, TensorTable& table, const std::filesystem::path& path) {
  const ModelConfig& c = m.config;
  for (int l = 0; l < c.n_layers; ++l) {
    if (c.block(l).mixer != MixerKind::gated_deltanet) continue;
    const std::string p = "blk." + std::to_string(l) + ".";
    if (table.contains(p + "ssm_in.weight")) continue;
    auto qkv = table.find(p + "attn_qkv.weight"), gate = table.find(p + "attn_gate.weight");
    if (qkv == table.end() || gate == table.end())
      throw EngineError(path.string() + ": tensor " + p + "ssm_in.weight is missing (and so is " +
                        (qkv == table.end() ? p + "attn_qkv.weight" : p + "attn_gate.weight") + " of the split layout)");
    const std::vector<std::int64_t> want_qkv{c.gdn_conv_dim(), c.dim}, want_gate{c.gdn_value_dim(), c.dim};
    if (qkv->second.shape != want_qkv || gate->second.shape != want_gate)
      throw EngineError(path.string() + ": tensors " + p + "attn_qkv / attn_gate do not have the shapes [" + std::to_string(c.gdn_conv_dim()) +
                        "," + std::to_string(c.dim) + "] / [" + std::to_string(c.gdn_value_dim()) + "," + std::to_string(c.dim) + "]");
    const TensorView &qv = qkv->second, &gv = gate->second;
    const auto row = storage_bytes(qv.dtype, c.dim);
    if (qv.dtype == gv.dtype && row && *row * c.gdn_conv_dim() == static_cast<std::int64_t>(qv.data.size())) {
      // Regroup whole rows in the file's dtype (bf16 / f16 / Q8_0 stay typed: a copy of this one
      // tensor, never widened to float32).
      const std::size_t rb = static_cast<std::size_t>(*row);
      auto grouped = std::make_shared<std::vector<std::byte>>(rb * static_cast<std::size_t>(c.gdn_qkvz_dim()));
      const auto sources = qkvz_grouped_sources(c);
      for (std::size_t r = 0; r < sources.size(); ++r) {
        const auto& [from_gate, src] = sources[r];
        const std::byte* from = (from_gate ? gv : qv).data.data() + static_cast<std::size_t>(src) * rb;
        std::copy(from, from + rb, grouped->data() + r * rb);
      }
      m.keep_alive(grouped);
      table[p + "ssm_in.weight"] = TensorView{qv.dtype, {c.gdn_qkvz_dim(), c.dim}, std::span<const std::byte>(*grouped), {}};
    } else {
      std::vector<float> a(static_cast<std::size_t>(qv.elements())), b(static_cast<std::size_t>(gv.elements()));
      dequantize(qv.dtype, qv.data, a);
      dequantize(gv.dtype, gv.data, b);
      auto grouped = std::make_shared<std::vector<float>>(a.size() + b.size());
      qkvz_grouped_from_split(c, a.data(), b.data(), grouped->data());
      m.keep_alive(grouped);
      table[p + "ssm_in.weight"] = TensorView{DType::f32, {c.gdn_qkvz_dim(), c.dim},
                                              std::as_bytes(std::span<const float>(grouped->data(), grouped->size())), {}};
    }
    table.erase(qkv);
    table.erase(p + "attn_gate.weight");
  }
}

}  // namespace

Model load_gguf(const std::filesystem::path& path, const LoadOptions& opts) {
  GgufFile f = read_gguf(path);
  Model m;
  ModelConfig& c = m.config;
  const std::string arch = f.get_string("general.architecture");
  if (arch == "llama") {
    c.arch = Arch::llama;
    c.rope_layout = RopeLayout::interleaved;
  } else if (arch == "qwen3") {
    c.arch = Arch::qwen3;
    c.rope_layout = RopeLayout::half;
    c.qk_norm = true;
  } else if (arch == "qwen3next") {
    c.arch = Arch::qwen3_next;
    c.rope_layout = RopeLayout::half;
    c.qk_norm = true;
  } else {
    key_error(f, "general.architecture", "\"" + arch + "\" is not supported (supported: llama, qwen3, qwen3next)");
  }
  c.name = f.find("general.name") ? f.get_string("general.name") : path.stem().string();
  c.dim = config_int(f, arch + ".embedding_length");
  // qwen3next: a model whose every layer is MoE has no dense FFN size (0); validate_config asks
  // for one only when some block is a dense SwiGLU.
  c.hidden_dim = arch == "qwen3next" && !f.find(arch + ".feed_forward_length") ? 0 : config_int(f, arch + ".feed_forward_length");
  c.n_layers = config_int(f, arch + ".block_count");
  // Each layer owns tensors; checked before anything is sized by the layer count (fuzz_gguf:
  // block_count 2^31 - 1 exhausted memory).
  if (static_cast<std::size_t>(c.n_layers) > f.tensors.size())
    key_error(f, arch + ".block_count", std::to_string(c.n_layers) + " layers, but the file has only " + std::to_string(f.tensors.size()) + " tensors");
  c.n_heads = config_int(f, arch + ".attention.head_count");
  c.n_kv_heads = f.find(arch + ".attention.head_count_kv") ? config_int(f, arch + ".attention.head_count_kv") : c.n_heads;
  c.head_dim = f.find(arch + ".attention.key_length") ? config_int(f, arch + ".attention.key_length") : c.dim / c.n_heads;
  if (f.find(arch + ".attention.layer_norm_rms_epsilon")) c.rms_eps = static_cast<float>(f.get_float(arch + ".attention.layer_norm_rms_epsilon"));
  c.rope_theta = f.find(arch + ".rope.freq_base") ? static_cast<float>(f.get_float(arch + ".rope.freq_base")) : 10000.0f;
  if (c.arch == Arch::qwen3_next) {
    read_qwen3next_keys(f, c);
  } else if (f.find(arch + ".rope.dimension_count") && f.get_uint(arch + ".rope.dimension_count") != static_cast<std::uint64_t>(c.head_dim)) {
    key_error(f, arch + ".rope.dimension_count",
              std::to_string(f.get_uint(arch + ".rope.dimension_count")) + " differs from head_dim " + std::to_string(c.head_dim) +
                  " (partial RoPE is supported for qwen3next only)");
  }
  c.max_seq_len = opts.max_seq_len > 0 ? opts.max_seq_len : config_int(f, arch + ".context_length");

  TensorTable table;
  for (const auto& t : f.tensors) {
    if (!table.emplace(t.name, TensorView{t.dtype, row_major(t.ne), f.tensor_data(t), {}}).second)
      throw EngineError(path.string() + ": GGUF tensor '" + t.name + "': duplicate name");
  }
  auto emb = table.find("token_embd.weight");
  if (emb == table.end()) throw EngineError(path.string() + ": tensor token_embd.weight is missing");
  if (emb->second.shape.size() != 2 || emb->second.shape[0] > std::numeric_limits<int>::max())
    throw EngineError(path.string() + ": tensor token_embd.weight has " + std::to_string(emb->second.shape.size()) + " dimensions, expected 2");
  c.vocab_size = static_cast<int>(emb->second.shape[0]);
  validate_config(c, path);
  if (c.arch == Arch::qwen3_next) split_qkv_to_grouped(m, table, path);
  const auto unused = assemble_weights(m, table, path);
  m.keep_alive(f.map);

  // With LoadOptions::tokenizer_path, load_model reads that tokenizer instead: the file's own is
  // not built, so an embedded vocabulary we cannot read (an unsupported pre-tokenizer, more tokens
  // than rows) does not stop the override a user reaches for to work around it.
  if (opts.tokenizer_path.empty()) {
    m.tokenizer = gguf_tokenizer(f);
    // llama.cpp requires token_embd's rows to equal the token count (check_tensor_dims); fewer
    // tokens than rows is harmless (padded embeddings), more would embed ids past the table.
    if (m.tokenizer && m.tokenizer->vocab_size() > c.vocab_size)
      key_error(f, "tokenizer.ggml.tokens", std::to_string(m.tokenizer->vocab_size()) + " tokens, but token_embd.weight has only " +
                                                std::to_string(c.vocab_size) + " rows (the model's vocab_size)");
    // A synthetic model written by make-model gets back the byte-level tokenizer its preset had.
    if (!m.tokenizer && f.find("atlas.preset") && c.vocab_size >= 259) m.tokenizer = make_byte_tokenizer(c.vocab_size);
  }
  m.source.path = path;
  m.source.format = "gguf";
  m.source.metadata["gguf.version"] = std::to_string(f.version);
  for (const auto& u : unused) {
    auto& list = m.source.metadata["gguf.unused_tensors"];
    if (!list.empty()) list += ',';
    list += u;
  }
  for (const auto& [k, v] : f.metadata) {
    const bool wanted = k.rfind("general.", 0) == 0 || k.rfind("atlas.", 0) == 0 || k == "tokenizer.ggml.model" || k == "tokenizer.ggml.pre";
    if (wanted && !std::holds_alternative<GgufValue::Array>(v.value)) {
      m.source.metadata[k] = std::holds_alternative<std::string>(v.value) ? std::get<std::string>(v.value) : value_str(v);
    }
  }
  return m;
}

}  // namespace atlas::engine
