#include "engine/formats/llama2c.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <fstream>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/tokenizer/spm.hpp"

namespace atlas::engine {

namespace {

constexpr std::uint32_t kMagic = 0x616b3432;  // "ak42"
constexpr std::size_t kVersionedHeaderBytes = 256;
constexpr std::size_t kLegacyHeaderBytes = 7 * 4;

struct Header {
  std::int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
  int version = 0;
  bool shared = true;
  std::int32_t group_size = 0;
  std::size_t data_offset = 0;
};

std::vector<char> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw EngineError(path.string() + ": cannot open model file");
  const auto size = static_cast<std::size_t>(in.tellg());
  std::vector<char> bytes(size);
  in.seekg(0);
  if (size && !in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    throw EngineError(path.string() + ": read error");
  }
  return bytes;
}

template <class T>
T load_at(const std::vector<char>& b, std::size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  return v;
}

Header parse_header(const std::string& name, const std::vector<char>& b) {
  Header h{};
  if (b.size() < kLegacyHeaderBytes) {
    throw EngineError(name + ": file size is " + std::to_string(b.size()) + " bytes, smaller than the " +
                      std::to_string(kLegacyHeaderBytes) + "-byte llama2.c header");
  }
  std::size_t at = 0;
  if (load_at<std::uint32_t>(b, 0) == kMagic) {
    if (b.size() < kVersionedHeaderBytes) {
      throw EngineError(name + ": file size is " + std::to_string(b.size()) + " bytes, smaller than the " +
                        std::to_string(kVersionedHeaderBytes) + "-byte ak42 header");
    }
    h.version = load_at<std::int32_t>(b, 4);
    if (h.version != 1 && h.version != 2) {
      throw EngineError(name + ": header field version = " + std::to_string(h.version) + " is not supported (1 = fp32, 2 = Q8_0)");
    }
    at = 8;
  }
  std::int32_t* fields[] = {&h.dim, &h.hidden_dim, &h.n_layers, &h.n_heads, &h.n_kv_heads, &h.vocab_size, &h.seq_len};
  for (auto* f : fields) {
    *f = load_at<std::int32_t>(b, at);
    at += 4;
  }
  if (h.version == 0) {
    h.shared = h.vocab_size > 0;
    if (h.vocab_size == std::numeric_limits<std::int32_t>::min())  // -INT_MIN overflows
      throw EngineError(name + ": header field vocab_size = " + std::to_string(h.vocab_size) + " is invalid");
    if (h.vocab_size < 0) h.vocab_size = -h.vocab_size;
    h.data_offset = kLegacyHeaderBytes;
  } else {
    const auto flag = static_cast<unsigned char>(b[at]);
    if (flag > 1) throw EngineError(name + ": header field shared_classifier = " + std::to_string(flag) + " is invalid (must be 0 or 1)");
    h.shared = flag == 1;
    if (h.version == 2) {
      h.group_size = load_at<std::int32_t>(b, at + 1);
      if (h.group_size <= 0) {
        throw EngineError(name + ": header field group_size = " + std::to_string(h.group_size) + " is invalid (must be > 0)");
      }
    }
    h.data_offset = kVersionedHeaderBytes;
  }
  struct Bound {
    const char* field;
    std::int32_t value, max;
  };
  for (const Bound& f : {Bound{"dim", h.dim, 1 << 16}, Bound{"hidden_dim", h.hidden_dim, 1 << 18}, Bound{"n_layers", h.n_layers, 1024},
                         Bound{"n_heads", h.n_heads, 1024}, Bound{"n_kv_heads", h.n_kv_heads, 1024},
                         Bound{"vocab_size", h.vocab_size, 1 << 22}, Bound{"seq_len", h.seq_len, 1 << 22}}) {
    if (f.value <= 0 || f.value > f.max) {
      throw EngineError(name + ": header field " + f.field + " = " + std::to_string(f.value) + " is invalid (must be in [1, " +
                        std::to_string(f.max) + "])");
    }
  }
  if (h.dim % h.n_heads != 0) {
    throw EngineError(name + ": header field n_heads = " + std::to_string(h.n_heads) + " does not divide dim = " + std::to_string(h.dim));
  }
  if (h.n_kv_heads > h.n_heads || h.n_heads % h.n_kv_heads != 0) {
    throw EngineError(name + ": header field n_kv_heads = " + std::to_string(h.n_kv_heads) + " does not divide n_heads = " +
                      std::to_string(h.n_heads));
  }
  if ((h.dim / h.n_heads) % 2 != 0) {
    throw EngineError(name + ": head size dim / n_heads = " + std::to_string(h.dim / h.n_heads) + " is odd (RoPE needs pairs)");
  }
  return h;
}

/// Sizes in floats of the tensors of one model.
struct Shapes {
  std::size_t emb, norm, wq, wkv, wo, w_ffn, final_norm, rope_table;
};
Shapes shapes_of(const Header& h) {
  const std::size_t d = static_cast<std::size_t>(h.dim), L = static_cast<std::size_t>(h.n_layers);
  const std::size_t hs = d / static_cast<std::size_t>(h.n_heads), kv = hs * static_cast<std::size_t>(h.n_kv_heads);
  return {static_cast<std::size_t>(h.vocab_size) * d, L * d, L * d * d, L * kv * d, L * d * d,
          L * static_cast<std::size_t>(h.hidden_dim) * d, d, static_cast<std::size_t>(h.seq_len) * hs / 2};
}

void check_size(const std::string& name, const Header& h, std::size_t expected, std::size_t actual) {
  if (expected != actual) {
    throw EngineError(name + ": file size is " + std::to_string(actual) + " bytes but the header (version " + std::to_string(h.version) +
                      ", dim " + std::to_string(h.dim) + ", hidden_dim " + std::to_string(h.hidden_dim) + ", n_layers " +
                      std::to_string(h.n_layers) + ", n_heads " + std::to_string(h.n_heads) + ", n_kv_heads " +
                      std::to_string(h.n_kv_heads) + ", vocab_size " + std::to_string(h.vocab_size) + ", seq_len " +
                      std::to_string(h.seq_len) + ") implies " + std::to_string(expected) + " bytes");
  }
}

/// Hands out consecutive tensors of a float32 region in file order.
class F32Cursor {
 public:
  F32Cursor(std::span<const float> all, std::size_t first) : all_(all), at_(first) {}
  std::span<const float> take(std::size_t n) {
    auto s = all_.subspan(at_, n);
    at_ += n;
    return s;
  }

 private:
  std::span<const float> all_;
  std::size_t at_;
};

/// Splits a [n_layers * per] tensor into per-layer spans.
void per_layer(std::vector<LayerWeights>& layers, std::span<const float> all, Weight LayerWeights::*member) {
  const std::size_t per = all.size() / layers.size();
  for (std::size_t l = 0; l < layers.size(); ++l) layers[l].*member = all.subspan(l * per, per);
}

ModelConfig config_of(const Header& h, const std::filesystem::path& path, const LoadOptions& opts) {
  ModelConfig c;
  c.arch = Arch::llama;
  c.name = path.stem().string();
  c.dim = h.dim;
  c.hidden_dim = h.hidden_dim;
  c.n_layers = h.n_layers;
  c.n_heads = h.n_heads;
  c.n_kv_heads = h.n_kv_heads;
  c.head_dim = h.dim / h.n_heads;
  c.vocab_size = h.vocab_size;
  c.max_seq_len = opts.max_seq_len > 0 ? opts.max_seq_len : h.seq_len;
  c.rms_eps = 1e-5f;
  c.rope_theta = 10000.0f;
  c.rope_layout = RopeLayout::interleaved;
  c.tied_embeddings = h.shared;
  c.qk_norm = false;
  return c;
}

std::filesystem::path find_tokenizer(const std::filesystem::path& model, const std::filesystem::path& explicit_path,
                                     const LoadOptions& opts, int vocab) {
  if (!explicit_path.empty()) return explicit_path;
  if (!opts.tokenizer_path.empty()) return opts.tokenizer_path;
  const auto dir = model.parent_path();
  for (const auto& candidate : {dir / "tokenizer.bin", dir / ("tok" + std::to_string(vocab) + ".bin")}) {
    if (std::filesystem::is_regular_file(candidate)) return candidate;
  }
  return {};
}

}  // namespace

std::optional<std::uintmax_t> llama2c_legacy_expected_size(const std::filesystem::path& model) {
  try {
    std::ifstream in(model, std::ios::binary);
    std::vector<char> head(kLegacyHeaderBytes);
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    if (static_cast<std::size_t>(in.gcount()) < kLegacyHeaderBytes) return std::nullopt;
    const Header h = parse_header(model.string(), head);
    const Shapes s = shapes_of(h);
    const std::size_t floats = s.emb + 2 * s.norm + s.wq + 2 * s.wkv + s.wo + 3 * s.w_ffn + s.final_norm + 2 * s.rope_table +
                               (h.shared ? 0 : s.emb);
    return kLegacyHeaderBytes + 4 * floats;
  } catch (const EngineError&) {
    return std::nullopt;
  }
}

std::optional<std::string> llama2c_legacy_header_problem(const std::filesystem::path& model) {
  std::ifstream in(model, std::ios::binary);
  std::vector<char> head(kLegacyHeaderBytes);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (static_cast<std::size_t>(in.gcount()) < kLegacyHeaderBytes) return std::nullopt;
  try {
    parse_header("", head);
  } catch (const EngineError& e) {
    std::string what = e.what();
    return what.starts_with(": ") ? what.substr(2) : what;
  }
  return std::nullopt;
}

bool looks_like_llama2c(const std::filesystem::path& model) {
  std::ifstream in(model, std::ios::binary);
  std::vector<char> magic(4);
  in.read(magic.data(), 4);
  if (in.gcount() == 4 && load_at<std::uint32_t>(magic, 0) == kMagic) return true;
  const auto want = llama2c_legacy_expected_size(model);
  return want && *want == std::filesystem::file_size(model);
}

Model load_llama2c(const std::filesystem::path& path, const std::filesystem::path& tokenizer, const LoadOptions& opts) {
  const std::string name = path.string();
  std::vector<char> bytes = read_file(path);
  const Header h = parse_header(name, bytes);
  const Shapes s = shapes_of(h);
  Model m;
  m.config = config_of(h, path, opts);
  m.source.path = path;
  m.source.format = "llama2c";
  m.source.metadata["llama2c.version"] = std::to_string(h.version);
  m.weights.layers.resize(static_cast<std::size_t>(h.n_layers));
  auto& layers = m.weights.layers;
  const std::size_t cls = h.shared ? 0 : s.emb;

  if (h.version == 0 || h.version == 1) {
    const std::size_t floats = s.emb + 2 * s.norm + s.wq + 2 * s.wkv + s.wo + 3 * s.w_ffn + s.final_norm +
                               (h.version == 0 ? 2 * s.rope_table : 0) + cls;
    check_size(name, h, h.data_offset + 4 * floats, bytes.size());
    std::vector<float> values(floats);
    std::memcpy(values.data(), bytes.data() + h.data_offset, 4 * floats);
    bytes = {};
    F32Cursor c(m.own(std::move(values)), 0);
    if (h.version == 0) {
      m.weights.tok_embd = c.take(s.emb);
      per_layer(layers, c.take(s.norm), &LayerWeights::attn_norm);
      per_layer(layers, c.take(s.wq), &LayerWeights::wq);
      per_layer(layers, c.take(s.wkv), &LayerWeights::wk);
      per_layer(layers, c.take(s.wkv), &LayerWeights::wv);
      per_layer(layers, c.take(s.wo), &LayerWeights::wo);
      per_layer(layers, c.take(s.norm), &LayerWeights::ffn_norm);
      per_layer(layers, c.take(s.w_ffn), &LayerWeights::w_gate);
      per_layer(layers, c.take(s.w_ffn), &LayerWeights::w_down);
      per_layer(layers, c.take(s.w_ffn), &LayerWeights::w_up);
      m.weights.output_norm = c.take(s.final_norm);
      c.take(2 * s.rope_table);  // freq_cis_real / freq_cis_imag: RoPE is recomputed
    } else {
      per_layer(layers, c.take(s.norm), &LayerWeights::attn_norm);
      per_layer(layers, c.take(s.norm), &LayerWeights::ffn_norm);
      m.weights.output_norm = c.take(s.final_norm);
      m.weights.tok_embd = c.take(s.emb);
      per_layer(layers, c.take(s.wq), &LayerWeights::wq);
      per_layer(layers, c.take(s.wkv), &LayerWeights::wk);
      per_layer(layers, c.take(s.wkv), &LayerWeights::wv);
      per_layer(layers, c.take(s.wo), &LayerWeights::wo);
      per_layer(layers, c.take(s.w_ffn), &LayerWeights::w_gate);
      per_layer(layers, c.take(s.w_ffn), &LayerWeights::w_down);
      per_layer(layers, c.take(s.w_ffn), &LayerWeights::w_up);
    }
    m.weights.output = h.shared ? m.weights.tok_embd : Weight(c.take(cls));
  } else {
    // Version 2 (Q8_0): float32 norms, then int8 values + float32 group scales per matrix.
    const std::size_t gs = static_cast<std::size_t>(h.group_size);
    const std::size_t L = static_cast<std::size_t>(h.n_layers);
    const std::size_t matrices[] = {s.emb, s.wq / L, s.wkv / L, s.wkv / L, s.wo / L, s.w_ffn / L, s.w_ffn / L, s.w_ffn / L, cls};
    const std::size_t counts[] = {1, L, L, L, L, L, L, L, 1};
    const char* names[] = {"token_embedding", "wq", "wk", "wv", "wo", "w1", "w2", "w3", "wcls"};
    std::size_t expected = h.data_offset + 4 * (2 * s.norm + s.final_norm);
    for (std::size_t i = 0; i < std::size(matrices); ++i) {
      if (matrices[i] % gs != 0) {
        throw EngineError(name + ": header field group_size = " + std::to_string(gs) + " does not divide the " +
                          std::to_string(matrices[i]) + " values of " + names[i]);
      }
      expected += counts[i] * (matrices[i] + 4 * (matrices[i] / gs));
    }
    check_size(name, h, expected, bytes.size());
    std::size_t at = h.data_offset;
    auto take_f32 = [&](std::size_t n) {
      std::vector<float> v(n);
      std::memcpy(v.data(), bytes.data() + at, 4 * n);
      at += 4 * n;
      return m.own(std::move(v));
    };
    auto take_q8 = [&](std::size_t n) {
      std::vector<float> v(n);
      const auto* q = reinterpret_cast<const std::int8_t*>(bytes.data() + at);
      const char* scales = bytes.data() + at + n;
      for (std::size_t g = 0; g < n / gs; ++g) {
        float scale;
        std::memcpy(&scale, scales + 4 * g, 4);
        for (std::size_t j = g * gs; j < (g + 1) * gs; ++j) v[j] = static_cast<float>(q[j]) * scale;
      }
      at += n + 4 * (n / gs);
      return m.own(std::move(v));
    };
    // export.py serializes each layer's matrix separately: int8 values, then its scales.
    auto take_q8_layers = [&](std::size_t total, Weight LayerWeights::*member) {
      for (auto& layer : layers) layer.*member = take_q8(total / layers.size());
    };
    per_layer(layers, take_f32(s.norm), &LayerWeights::attn_norm);
    per_layer(layers, take_f32(s.norm), &LayerWeights::ffn_norm);
    m.weights.output_norm = take_f32(s.final_norm);
    m.weights.tok_embd = take_q8(s.emb);
    take_q8_layers(s.wq, &LayerWeights::wq);
    take_q8_layers(s.wkv, &LayerWeights::wk);
    take_q8_layers(s.wkv, &LayerWeights::wv);
    take_q8_layers(s.wo, &LayerWeights::wo);
    take_q8_layers(s.w_ffn, &LayerWeights::w_gate);
    take_q8_layers(s.w_ffn, &LayerWeights::w_down);
    take_q8_layers(s.w_ffn, &LayerWeights::w_up);
    m.weights.output = h.shared ? m.weights.tok_embd : Weight(take_q8(cls));
  }

  if (const auto tok = find_tokenizer(path, tokenizer, opts, h.vocab_size); !tok.empty()) {
    m.tokenizer = load_llama2c_tokenizer(tok, h.vocab_size);
  }
  return m;
}

}  // namespace atlas::engine
