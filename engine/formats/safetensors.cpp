#include "engine/formats/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/formats/hf_config.hpp"
#include "engine/formats/json_input.hpp"
#include "engine/formats/qwen3_next_tensors.hpp"
#include "engine/tokenizer/bpe.hpp"

namespace atlas::engine {

namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxSafetensorsHeader = 100'000'000;

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& field, const std::string& what) {
  throw EngineError(file.string() + ": safetensors " + field + ": " + what);
}

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "F32") return DType::f32;
  if (s == "F16") return DType::f16;
  if (s == "BF16") return DType::bf16;
  return std::nullopt;
}

}  // namespace

SafetensorsFile read_safetensors(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.path = path;
  f.map = MappedFile::open_shared(path);
  const auto bytes = f.map->bytes();
  if (bytes.size() < 8) bad(path, "header length", "file is " + std::to_string(bytes.size()) + " bytes, shorter than the 8-byte length");
  std::uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  if (n > bytes.size() - 8) bad(path, "header length", std::to_string(n) + " runs past the end of the file (" + std::to_string(bytes.size()) + " bytes)");
  // safetensors' own reader refuses headers above 100,000,000 bytes (MAX_HEADER_SIZE): a real
  // header is a few hundred KiB, and a larger one only makes the JSON parser allocate.
  if (n > kMaxSafetensorsHeader)
    bad(path, "header length", std::to_string(n) + " bytes is above the format's limit of " + std::to_string(kMaxSafetensorsHeader));
  // Depth-checked before parsing (error messages print values: dump() recurses per level), and a
  // tensor name given twice is an error, not "the last one wins".
  const json h = parse_json_input(std::string_view(reinterpret_cast<const char*>(bytes.data() + 8), static_cast<std::size_t>(n)), path,
                                  "safetensors header", /*reject_duplicate_keys=*/true);
  if (!h.is_object()) bad(path, "header", "expected a JSON object");
  const auto data = bytes.subspan(8 + static_cast<std::size_t>(n));
  struct Range {
    std::uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (const auto& [name, t] : h.items()) {
    if (name == "__metadata__") {
      if (!t.is_object()) bad(path, "__metadata__", "expected an object");
      // The format's __metadata__ is a string-to-string map (safetensors rejects anything else).
      for (const auto& [k, v] : t.items()) {
        if (!v.is_string()) bad(path, "__metadata__." + k, "expected a string, got " + json_brief(v));
        f.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    const std::string field = "tensor '" + name + "'";
    if (!t.is_object() || !t.contains("dtype") || !t.contains("shape") || !t.contains("data_offsets")) bad(path, field, "expected {dtype, shape, data_offsets}");
    const json& dt = t["dtype"];
    const auto dtype = dt.is_string() ? parse_dtype(dt.get<std::string>()) : std::nullopt;
    if (!dtype) bad(path, field, "dtype " + dt.dump() + " is not supported (supported: F32, F16, BF16)");
    TensorView v;
    v.dtype = *dtype;
    std::int64_t elems = 1;
    if (!t["shape"].is_array()) bad(path, field, "shape " + t["shape"].dump() + " is not an array");
    for (const json& d : t["shape"]) {
      if (!d.is_number_unsigned() || d.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        bad(path, field, "shape " + t["shape"].dump() + " has a bad dimension " + d.dump());
      const auto x = d.get<std::int64_t>();
      if (x != 0 && elems > std::numeric_limits<std::int64_t>::max() / 4 / x) bad(path, field, "shape " + t["shape"].dump() + " is too large");
      elems *= x;
      v.shape.push_back(x);
    }
    const json& off = t["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      bad(path, field, "data_offsets " + off.dump() + " is not [begin, end]");
    const auto b = off[0].get<std::uint64_t>(), e = off[1].get<std::uint64_t>();
    if (b > e || e > data.size())
      bad(path, field, "data_offsets " + off.dump() + " are out of order or run past the data section (" + std::to_string(data.size()) + " bytes)");
    const auto need = storage_bytes(v.dtype, elems);
    if (!need || static_cast<std::uint64_t>(*need) != e - b)
      bad(path, field, "data_offsets " + off.dump() + " hold " + std::to_string(e - b) + " bytes, " + dt.get<std::string>() + " " + t["shape"].dump() + " needs " +
                           std::to_string(need.value_or(-1)));
    v.data = data.subspan(static_cast<std::size_t>(b), static_cast<std::size_t>(e - b));
    ranges.push_back({b, e, name});
    f.tensors.emplace(name, std::move(v));
  }
  // The format requires the sorted ranges to tile the data buffer exactly: two tensors over the
  // same bytes would load one as the other (k_proj silently equal to v_proj), and a gap is bytes
  // nobody owns (safetensors' own validate() rejects both). Zero-length tensors take no bytes and
  // sit at a boundary, so they pass.
  std::stable_sort(ranges.begin(), ranges.end(), [](const Range& x, const Range& y) { return x.begin != y.begin ? x.begin < y.begin : x.end < y.end; });
  std::uint64_t at = 0;
  const Range* prev = nullptr;
  for (const Range& r : ranges) {
    const std::string field = "tensor '" + r.name + "'";
    const std::string offs = "data_offsets [" + std::to_string(r.begin) + "," + std::to_string(r.end) + "]";
    if (r.begin < at)
      bad(path, field, offs + " overlap tensor '" + prev->name + "' [" + std::to_string(prev->begin) + "," + std::to_string(prev->end) +
                           "] (the ranges must tile the data section exactly)");
    if (r.begin > at)
      bad(path, field, offs + " leave a gap of " + std::to_string(r.begin - at) + " bytes after byte " + std::to_string(at) +
                           " (the ranges must tile the data section exactly)");
    at = r.end;
    prev = &r;
  }
  if (at != data.size())
    bad(path, "data section", std::to_string(data.size() - at) + " bytes after the last tensor's end " + std::to_string(at) +
                                  " belong to no tensor (the ranges must tile the data section exactly)");
  return f;
}

std::string safetensors_bytes(std::span<const SafetensorsTensor> tensors, const std::map<std::string, std::string>& metadata) {
  json h = json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  std::string data;
  for (const auto& t : tensors) {
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    if (n != static_cast<std::int64_t>(t.values.size()))
      throw EngineError("safetensors writer: tensor '" + t.name + "' has " + std::to_string(t.values.size()) + " values for " + std::to_string(n) + " elements");
    const std::size_t begin = data.size();
    for (float x : t.values) {
      if (t.dtype == DType::f32) {
        data.append(reinterpret_cast<const char*>(&x), 4);
      } else if (t.dtype == DType::f16 || t.dtype == DType::bf16) {
        const std::uint16_t h16 = t.dtype == DType::f16 ? f32_to_f16(x) : f32_to_bf16(x);
        data.append(reinterpret_cast<const char*>(&h16), 2);
      } else {
        throw EngineError("safetensors writer: tensor '" + t.name + "': dtype " + to_string(t.dtype) + " is not supported");
      }
    }
    h[t.name] = {{"dtype", to_string(t.dtype)}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string header = h.dump();
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const std::uint64_t len = header.size();
  std::memcpy(out.data(), &len, 8);
  return out + header + data;
}

namespace {

/// "model.layers.3.self_attn.q_proj.weight" -> "blk.3.attn_q.weight" (empty if not a weight we use).
std::string engine_name(const std::string& hf) {
  if (hf == "model.embed_tokens.weight") return "token_embd.weight";
  if (hf == "model.norm.weight") return "output_norm.weight";
  if (hf == "lm_head.weight") return "output.weight";
  const std::string prefix = "model.layers.";
  if (hf.rfind(prefix, 0) != 0) return {};
  const auto dot = hf.find('.', prefix.size());
  if (dot == std::string::npos) return {};
  const std::string layer = hf.substr(prefix.size(), dot - prefix.size());
  if (layer.empty() || layer.find_first_not_of("0123456789") != std::string::npos) return {};
  static const std::pair<const char*, const char*> map[] = {
      {"self_attn.q_proj.weight", "attn_q.weight"},   {"self_attn.k_proj.weight", "attn_k.weight"},
      {"self_attn.v_proj.weight", "attn_v.weight"},   {"self_attn.o_proj.weight", "attn_output.weight"},
      {"self_attn.q_norm.weight", "attn_q_norm.weight"}, {"self_attn.k_norm.weight", "attn_k_norm.weight"},
      {"input_layernorm.weight", "attn_norm.weight"}, {"post_attention_layernorm.weight", "ffn_norm.weight"},
      {"mlp.gate_proj.weight", "ffn_gate.weight"},    {"mlp.up_proj.weight", "ffn_up.weight"},
      {"mlp.down_proj.weight", "ffn_down.weight"},
  };
  const std::string rest = hf.substr(dot + 1);
  for (const auto& [h, e] : map) {
    if (rest == h) return "blk." + layer + "." + e;
  }
  return {};
}

/// The inverse, for error messages.
std::string hf_name(const std::string& e) {
  if (e == "token_embd.weight") return "model.embed_tokens.weight";
  if (e == "output_norm.weight") return "model.norm.weight";
  if (e == "output.weight") return "lm_head.weight";
  static const std::pair<const char*, const char*> map[] = {
      {"attn_q.weight", "self_attn.q_proj.weight"},   {"attn_k.weight", "self_attn.k_proj.weight"},
      {"attn_v.weight", "self_attn.v_proj.weight"},   {"attn_output.weight", "self_attn.o_proj.weight"},
      {"attn_q_norm.weight", "self_attn.q_norm.weight"}, {"attn_k_norm.weight", "self_attn.k_norm.weight"},
      {"attn_norm.weight", "input_layernorm.weight"}, {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"ffn_gate.weight", "mlp.gate_proj.weight"},    {"ffn_up.weight", "mlp.up_proj.weight"},
      {"ffn_down.weight", "mlp.down_proj.weight"},
  };
  if (e.rfind("blk.", 0) == 0) {
    const auto dot = e.find('.', 4);
    const std::string rest = e.substr(dot + 1);
    for (const auto& [k, h] : map) {
      if (rest == k) return "model.layers." + e.substr(4, dot - 4) + "." + h;
    }
  }
  return e;
}

std::vector<std::filesystem::path> shard_files(const std::filesystem::path& dir) {
  const auto single = dir / "model.safetensors";
  const auto index = dir / "model.safetensors.index.json";
  if (std::filesystem::exists(index)) {
    const json j = read_json_input(index);
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      throw EngineError(index.string() + ": field 'weight_map': missing or not an object");
    std::set<std::string> names;
    for (const auto& [tensor, file] : j["weight_map"].items()) {
      if (!file.is_string()) throw EngineError(index.string() + ": field 'weight_map." + tensor + "': expected a file name, got " + file.dump());
      const std::string s = file.get<std::string>();
      if (s.empty() || s.find('/') != std::string::npos || s == "." || s == "..")
        throw EngineError(index.string() + ": field 'weight_map." + tensor + "': \"" + s + "\" is not a file name in the model directory");
      if (!std::filesystem::exists(dir / s))
        throw EngineError(index.string() + ": field 'weight_map." + tensor + "': shard \"" + s + "\" does not exist in the model directory");
      names.insert(s);
    }
    std::vector<std::filesystem::path> out;
    for (const auto& n : names) out.push_back(dir / n);
    return out;
  }
  if (std::filesystem::exists(single)) return {single};
  throw EngineError(dir.string() + ": neither model.safetensors nor model.safetensors.index.json");
}

/// Qwen3-Next: HF tensors -> the engine's GGUF-named table. Matrices and every other tensor the
/// engine uses as stored are views into the mapped checkpoint in its own dtype (bf16 stays bf16);
/// experts are one view each (TensorView::parts), from the per-expert checkpoint layout
/// (mlp.experts.E.{gate,up,down}_proj.weight) or transformers 5's fused one
/// (mlp.experts.gate_up_proj [E][2I][dim], mlp.experts.down_proj [E][dim][I]). Only the tensors
/// with an engine transform (1 + w for zero-centred norms, -exp(A_log): vectors) are converted,
/// to float32. Returns the table; `used` gets the HF names consumed.
TensorTable qwen3_next_table(Model& m, const std::map<std::string, TensorView>& hf, const std::filesystem::path& dir,
                             std::set<std::string>& used) {
  const ModelConfig& c = m.config;
  const auto list = qwen3_next_hf_tensors(c);
  auto transformed = [](HfInit init) { return init == HfInit::zero_centred_norm || init == HfInit::a_log; };
  std::map<std::string, std::vector<std::int64_t>> shapes;  // engine (GGUF row-major) shape per tensor
  std::int64_t convert_total = 0;
  for (const auto& t : list) {
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    if (transformed(t.init)) convert_total += n;
    std::vector<std::int64_t> shape = t.shape;
    if (t.expert >= 0) shape.insert(shape.begin(), c.n_experts);
    if (t.gguf_name.ends_with("ssm_conv1d.weight")) shape = {t.shape[0], t.shape[2]};
    if (t.gguf_name.ends_with("ffn_gate_inp_shexp.weight")) shape = {t.shape[1]};
    shapes[t.gguf_name] = shape;
  }
  std::shared_ptr<float[]> buf;
  if (convert_total > 0) {
    buf = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(convert_total));
    m.keep_alive(buf);
  }
  std::int64_t at = 0;
  TensorTable table;
  auto shape_str = [](const std::vector<std::int64_t>& v) {
    std::string o = "[";
    for (std::size_t i = 0; i < v.size(); ++i) o += (i ? "," : "") + std::to_string(v[i]);
    return o + "]";
  };
  // Elements [offset, offset + n) of checkpoint tensor `name` become (part of) engine tensor t.
  auto take = [&](const HfTensor& t, const std::string& name, const TensorView& v, std::int64_t offset, std::int64_t n) {
    const auto skip = storage_bytes(v.dtype, offset), len = storage_bytes(v.dtype, n);
    if (!skip || !len || *skip + *len > static_cast<std::int64_t>(v.data.size()))
      throw EngineError(dir.string() + ": tensor " + name + " (" + to_string(v.dtype) + ") holds " + std::to_string(v.data.size()) +
                        " bytes, too few for " + shape_str(v.shape));
    const auto bytes = v.data.subspan(static_cast<std::size_t>(*skip), static_cast<std::size_t>(*len));
    used.insert(name);
    TensorView& e = table[t.gguf_name];
    e.shape = shapes[t.gguf_name];
    if (transformed(t.init)) {  // vectors: the engine value, float32
      std::span<float> out(buf.get() + at, static_cast<std::size_t>(n));
      at += n;
      dequantize(v.dtype, bytes, out);
      for (float& x : out) x = qwen3_next_engine_value(t.init, x);
      e.dtype = DType::f32;
      e.data = std::as_bytes(std::span<const float>(out));
      return;
    }
    if (t.expert < 0) {
      e.dtype = v.dtype;
      e.data = bytes;
      return;
    }
    if (e.parts.empty()) {
      e.dtype = v.dtype;
      e.parts.resize(static_cast<std::size_t>(c.n_experts));
    } else if (e.dtype != v.dtype) {
      throw EngineError(dir.string() + ": tensor " + name + " is " + to_string(v.dtype) + ", the other experts of layer " + t.gguf_name +
                        " are " + to_string(e.dtype) + " (experts of one projection must share a dtype)");
    }
    e.parts[static_cast<std::size_t>(t.expert)] = bytes;
  };
  for (const auto& t : list) {
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    if (auto it = hf.find(t.hf_name); it != hf.end()) {
      if (it->second.shape != t.shape)
        throw EngineError(dir.string() + ": tensor " + t.hf_name + " has shape " + shape_str(it->second.shape) + ", expected " + shape_str(t.shape));
      take(t, t.hf_name, it->second, 0, n);
      continue;
    }
    if (t.expert >= 0) {  // transformers 5 fused experts
      const std::string layer = t.hf_name.substr(0, t.hf_name.find(".experts.") + 9);
      const bool down = t.hf_name.ends_with("down_proj.weight");
      const std::string fused = layer + (down ? "down_proj" : "gate_up_proj");
      if (auto it = hf.find(fused); it != hf.end()) {
        const std::int64_t e = c.n_experts, ih = c.expert_hidden_dim, d = c.dim;
        const std::vector<std::int64_t> want = down ? std::vector<std::int64_t>{e, d, ih} : std::vector<std::int64_t>{e, 2 * ih, d};
        if (it->second.shape != want)
          throw EngineError(dir.string() + ": tensor " + fused + " has shape " + shape_str(it->second.shape) + ", expected " + shape_str(want) +
                            " (num_experts " + std::to_string(e) + ")");
        std::int64_t offset = t.expert * (down ? d * ih : 2 * ih * d);
        if (t.hf_name.ends_with("up_proj.weight") && !down) offset += ih * d;  // [gate | up] per expert
        take(t, fused, it->second, offset, n);
        continue;
      }
    }
    std::string why;
    if (t.hf_name.ends_with("shared_expert_gate.weight"))
      why = " (config.json shared_expert_intermediate_size is " + std::to_string(c.shared_expert_hidden_dim) + ": a shared expert needs its gate)";
    else if (t.expert >= 0)
      why = " (config.json num_experts is " + std::to_string(c.n_experts) + ")";
    else if (t.hf_name.find("linear_attn") != std::string::npos || t.hf_name.find("self_attn") != std::string::npos)
      why = " (config.json makes this layer " + std::string(t.hf_name.find("linear_attn") != std::string::npos ? "linear_attention" : "full_attention") + ")";
    throw EngineError(dir.string() + ": tensor " + t.hf_name + " is missing" + why);
  }
  return table;
}

}  // namespace

Model load_safetensors_model(const std::filesystem::path& dir, const LoadOptions& opts) {
  const HfConfig hf = read_hf_config(dir / "config.json");
  Model m;
  m.config = hf.config;
  if (opts.max_seq_len > 0) m.config.max_seq_len = opts.max_seq_len;
  TensorTable table;
  std::vector<std::string> unused;  // tensors the engine has no use for (provenance)
  if (m.config.arch == Arch::qwen3_next) {
    std::map<std::string, TensorView> hf;
    for (const auto& shard : shard_files(dir)) {
      SafetensorsFile f = read_safetensors(shard);
      for (auto& [name, view] : f.tensors) {
        if (!hf.emplace(name, view).second) throw EngineError(shard.string() + ": tensor '" + name + "' also appears in another shard");
      }
      m.keep_alive(f.map);
    }
    if (!m.config.tied_embeddings && !hf.contains("lm_head.weight"))
      throw EngineError(dir.string() + ": tensor lm_head.weight is missing (config.json tie_word_embeddings is false)");
    validate_config(m.config, dir / "config.json");
    std::set<std::string> used;
    table = qwen3_next_table(m, hf, dir, used);
    for (const auto& [name, _] : hf) {
      if (!used.contains(name)) unused.push_back(name);  // e.g. mtp.* (multi-token prediction), unused here
    }
    for (const auto& u : assemble_weights(m, table, dir)) unused.push_back(u);
  }
  for (const auto& shard : m.config.arch == Arch::qwen3_next ? std::vector<std::filesystem::path>{} : shard_files(dir)) {
    SafetensorsFile f = read_safetensors(shard);
    for (auto& [name, view] : f.tensors) {
      const std::string e = engine_name(name);
      if (e.empty()) {
        unused.push_back(name);
        continue;
      }
      if (!table.emplace(e, view).second) throw EngineError(shard.string() + ": tensor '" + name + "' also appears in another shard");
    }
    m.keep_alive(f.map);
  }
  if (m.config.arch != Arch::qwen3_next) {
    if (m.config.tied_embeddings) {
      table.erase("output.weight");
    } else if (!table.contains("output.weight")) {
      throw EngineError(dir.string() + ": tensor lm_head.weight is missing (config.json tie_word_embeddings is false)");
    }
    validate_config(m.config, dir / "config.json");
    for (const auto& u : assemble_weights(m, table, dir, hf_name)) unused.push_back(u);
  }
  for (const auto& u : unused) {
    auto& list = m.source.metadata["safetensors.unused_tensors"];
    if (!list.empty()) list += ',';
    list += u;
  }
  if (!opts.tokenizer_path.empty()) {  // --tokenizer: a tokenizer.json from elsewhere wins over the directory's own
    m.tokenizer = load_tokenizer_json(opts.tokenizer_path, m.config.vocab_size);
    m.source.metadata["tokenizer"] = opts.tokenizer_path.string();
  } else if (const auto tok = dir / "tokenizer.json"; std::filesystem::exists(tok)) {
    m.tokenizer = load_tokenizer_json(tok, m.config.vocab_size);
  }
  m.source.path = dir;
  m.source.format = "safetensors";
  for (const auto& [k, v] : hf.ignored) m.source.metadata["hf." + k + " (not applied)"] = v;
  return m;
}

}  // namespace atlas::engine
