// Hugging Face directories: config.json + model.safetensors (single or sharded).
#include <doctest/doctest.h>

#include <cstring>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/formats/hf_config.hpp"
#include "engine/formats/presets.hpp"
#include "engine/formats/safetensors.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {

nlohmann::json hf_config_json(const ModelConfig& c) {
  return {{"architectures", {c.arch == Arch::qwen3 ? "Qwen3ForCausalLM" : "LlamaForCausalLM"}},
          {"hidden_size", c.dim},
          {"intermediate_size", c.hidden_dim},
          {"num_hidden_layers", c.n_layers},
          {"num_attention_heads", c.n_heads},
          {"num_key_value_heads", c.n_kv_heads},
          {"head_dim", c.head_dim},
          {"vocab_size", c.vocab_size},
          {"max_position_embeddings", c.max_seq_len},
          {"rms_norm_eps", c.rms_eps},
          {"rope_theta", c.rope_theta},
          {"tie_word_embeddings", c.tied_embeddings},
          {"hidden_act", "silu"}};
}

/// The model's tensors under their Hugging Face names.
std::vector<SafetensorsTensor> hf_tensors(const Model& m, DType dtype) {
  const ModelConfig& c = m.config;
  const std::int64_t d = c.dim, h = c.hidden_dim, v = c.vocab_size, q = c.q_dim(), kv = c.kv_dim(), hd = c.head_dim;
  std::vector<SafetensorsTensor> t;
  t.push_back({"model.embed_tokens.weight", dtype, {v, d}, m.weights.tok_embd});
  t.push_back({"model.norm.weight", dtype, {d}, m.weights.output_norm});
  if (!c.tied_embeddings) t.push_back({"lm_head.weight", dtype, {v, d}, m.weights.output});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const auto& L = m.weights.layers[static_cast<std::size_t>(l)];
    t.push_back({p + "input_layernorm.weight", dtype, {d}, L.attn_norm});
    t.push_back({p + "self_attn.q_proj.weight", dtype, {q, d}, L.wq});
    t.push_back({p + "self_attn.k_proj.weight", dtype, {kv, d}, L.wk});
    t.push_back({p + "self_attn.v_proj.weight", dtype, {kv, d}, L.wv});
    t.push_back({p + "self_attn.o_proj.weight", dtype, {d, q}, L.wo});
    if (c.qk_norm) {
      t.push_back({p + "self_attn.q_norm.weight", dtype, {hd}, L.q_norm});
      t.push_back({p + "self_attn.k_norm.weight", dtype, {hd}, L.k_norm});
    }
    t.push_back({p + "post_attention_layernorm.weight", dtype, {d}, L.ffn_norm});
    t.push_back({p + "mlp.gate_proj.weight", dtype, {h, d}, L.w_gate});
    t.push_back({p + "mlp.up_proj.weight", dtype, {h, d}, L.w_up});
    t.push_back({p + "mlp.down_proj.weight", dtype, {d, h}, L.w_down});
  }
  return t;
}

std::filesystem::path write_hf_dir(const std::string& name, const Model& m, DType dtype, int shards) {
  const auto dir = atlas::test::scratch_dir(name);
  atlas::write_file_atomic(dir / "config.json", hf_config_json(m.config).dump(2));
  const auto tensors = hf_tensors(m, dtype);
  if (shards == 1) {
    atlas::write_file_atomic(dir / "model.safetensors", safetensors_bytes(tensors));
    return dir;
  }
  nlohmann::json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::json::object()}};
  const std::size_t per = (tensors.size() + static_cast<std::size_t>(shards) - 1) / static_cast<std::size_t>(shards);
  for (int s = 0; s < shards; ++s) {
    const std::string file = "model-0000" + std::to_string(s + 1) + "-of-0000" + std::to_string(shards) + ".safetensors";
    const std::size_t b = per * static_cast<std::size_t>(s), e = std::min(tensors.size(), b + per);
    std::span<const SafetensorsTensor> part(tensors.data() + b, e - b);
    for (const auto& t : part) index["weight_map"][t.name] = file;
    atlas::write_file_atomic(dir / file, safetensors_bytes(part, {{"format", "pt"}}));
  }
  atlas::write_file_atomic(dir / "model.safetensors.index.json", index.dump());
  return dir;
}

bool equal(std::span<const float> a, std::span<const float> b) { return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0; }

std::string error_of(const std::filesystem::path& p) {
  try {
    load_model(p);
  } catch (const EngineError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

#define CHECK_ERROR(dir, text)              \
  do {                                      \
    const std::string err_ = error_of(dir); \
    CAPTURE(err_);                          \
    CHECK(err_.find(text) != std::string::npos); \
  } while (0)

TEST_CASE("safetensors: single-file llama directory loads bit-identical F32 weights") {
  const Model m = make_preset_model("tiny-llama", 9);
  const auto dir = write_hf_dir("st-single", m, DType::f32, 1);
  const Model r = load_model(dir);
  CHECK(r.source.format == "safetensors");
  CHECK(r.source.path == dir);
  CHECK(r.config.arch == Arch::llama);
  CHECK(r.config.rope_layout == RopeLayout::half);  // HF llama uses rotate_half
  CHECK(r.config.dim == 64);
  CHECK(r.config.n_kv_heads == 4);
  CHECK(r.config.max_seq_len == 512);
  CHECK(r.config.tied_embeddings);
  CHECK(r.tokenizer == nullptr);
  CHECK(equal(r.weights.tok_embd, m.weights.tok_embd));
  CHECK(r.source.metadata.count("safetensors.unused_tensors") == 0);
  CHECK(r.weights.output.data() == r.weights.tok_embd.data());
  for (std::size_t l = 0; l < 5; ++l) {
    CHECK(equal(r.weights.layers[l].wq, m.weights.layers[l].wq));
    CHECK(equal(r.weights.layers[l].w_down, m.weights.layers[l].w_down));
    CHECK(equal(r.weights.layers[l].ffn_norm, m.weights.layers[l].ffn_norm));
  }
}

TEST_CASE("safetensors: tensors the engine does not use are recorded in the provenance") {
  const Model m = make_preset_model("tiny-llama", 9);
  const auto dir = write_hf_dir("st-unused", m, DType::f32, 1);
  auto tensors = hf_tensors(m, DType::f32);
  const float inv_freq[4] = {1.0f, 0.1f, 0.01f, 0.001f};
  tensors.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", DType::f32, {4}, inv_freq});
  atlas::write_file_atomic(dir / "model.safetensors", safetensors_bytes(tensors));
  const Model r = load_model(dir);
  CHECK(r.source.metadata.at("safetensors.unused_tensors") == "model.layers.0.self_attn.rotary_emb.inv_freq");
  CHECK(equal(r.weights.layers[0].wq, m.weights.layers[0].wq));
}

TEST_CASE("safetensors: sharded BF16 qwen3 directory") {
  Model m = make_preset_model("tiny-qwen3", 4);
  m.config.tied_embeddings = false;  // exercise lm_head
  m.weights.output = m.weights.layers[0].w_up.first(static_cast<std::size_t>(512 * 64));
  const auto dir = write_hf_dir("st-sharded", m, DType::bf16, 3);
  const Model r = load_model(dir);
  CHECK(r.config.arch == Arch::qwen3);
  CHECK(r.config.qk_norm);
  CHECK(r.config.head_dim == 32);
  CHECK(r.config.rope_theta == 1000000.0f);
  CHECK_FALSE(r.config.tied_embeddings);
  REQUIRE(r.weights.output.size() == m.weights.output.size());
  for (std::size_t i = 0; i < m.weights.output.size(); i += 97) REQUIRE(r.weights.output[i] == bf16_to_f32(f32_to_bf16(m.weights.output[i])));
  CHECK(r.weights.layers[1].k_norm[3] == bf16_to_f32(f32_to_bf16(m.weights.layers[1].k_norm[3])));
  CHECK(r.source.metadata.count("safetensors.unused_tensors") == 0);

  // A shard named in the index but missing, and an index entry escaping the directory.
  std::filesystem::remove(dir / "model-00002-of-00003.safetensors");
  CHECK_ERROR(dir, "model.safetensors.index.json: field 'weight_map.model.layers.0.mlp.down_proj.weight': shard \"model-00002-of-00003.safetensors\" does not exist");
  atlas::write_file_atomic(dir / "model.safetensors.index.json", R"({"weight_map": {"model.norm.weight": "../x.safetensors"}})");
  CHECK_ERROR(dir, "weight_map.model.norm.weight': \"../x.safetensors\" is not a file name");
}

TEST_CASE("safetensors: corrupted headers and tensors name file, tensor and value") {
  const Model m = make_preset_model("tiny-llama", 2);
  const auto dir = write_hf_dir("st-corrupt", m, DType::f16, 1);
  const auto file = dir / "model.safetensors";
  const std::string good = atlas::read_file(file);
  std::uint64_t hlen;
  std::memcpy(&hlen, good.data(), 8);

  SUBCASE("header length past EOF") {
    std::string b = good;
    const std::uint64_t huge = 1ULL << 50;
    std::memcpy(b.data(), &huge, 8);
    atlas::write_file_atomic(file, b);
    CHECK_ERROR(dir, "model.safetensors: safetensors header length: 1125899906842624 runs past the end of the file");
  }
  SUBCASE("header not JSON") {
    std::string b = good;
    b[8] = '[';
    b[9] = '}';
    atlas::write_file_atomic(file, b);
    CHECK_ERROR(dir, "model.safetensors: safetensors header: not valid JSON");
  }
  SUBCASE("truncated data") {
    atlas::write_file_atomic(file, good.substr(0, good.size() - 10));
    CHECK_ERROR(dir, "down_proj.weight': data_offsets [498048,520064] are out of order or run past the data section (520054 bytes)");
  }
  SUBCASE("unsupported dtype") {
    std::string b = good;
    const auto at = b.find("\"F16\"");
    b.replace(at, 5, "\"I16\"");
    atlas::write_file_atomic(file, b);
    CHECK_ERROR(dir, "dtype \"I16\" is not supported");
  }
  SUBCASE("wrong shape for the config") {
    auto cfg = hf_config_json(m.config);
    cfg["intermediate_size"] = 170;
    atlas::write_file_atomic(dir / "config.json", cfg.dump());
    CHECK_ERROR(dir, "tensor model.layers.0.mlp.gate_proj.weight has shape [172,64], expected [170,64]");
  }
  SUBCASE("missing tensor, spelled with its HF name") {
    std::vector<SafetensorsTensor> t = hf_tensors(m, DType::f32);
    t.erase(t.begin() + 5);  // model.layers.0.self_attn.v_proj.weight (tied: no lm_head)
    atlas::write_file_atomic(file, safetensors_bytes(t));
    CHECK_ERROR(dir, "st-corrupt: tensor model.layers.0.self_attn.v_proj.weight is missing");
  }
  SUBCASE("config errors") {
    auto cfg = hf_config_json(m.config);
    cfg["num_attention_heads"] = -3;
    atlas::write_file_atomic(dir / "config.json", cfg.dump());
    CHECK_ERROR(dir, "config.json: field 'num_attention_heads': expected a positive integer, got -3");
    cfg = hf_config_json(m.config);
    cfg["architectures"] = {"MistralForCausalLM"};
    atlas::write_file_atomic(dir / "config.json", cfg.dump());
    CHECK_ERROR(dir, "field 'architectures': \"MistralForCausalLM\" is not supported");
  }
}

TEST_CASE("hf config: a layer count beyond any checkpoint is rejected before anything is sized") {
  // 2^31 - 1 layers made read_hf_config build 2^31 Qwen3-Next blocks (16 GiB) before reading a
  // tensor; found reviewing the reader for fuzz_hf_config.
  const auto dir = atlas::test::scratch_dir("hf-config-layers");
  for (const char* arch : {"qwen3_next", "llama"}) {
    CAPTURE(arch);
    atlas::write_file_atomic(dir / "config.json", std::string(R"({"model_type": ")") + arch + R"(", "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 2147483647, "num_attention_heads": 4, "vocab_size": 512})");
    CHECK_THROWS_WITH_AS(read_hf_config(dir / "config.json"),
                         doctest::Contains("field 'num_hidden_layers': 2147483647 exceeds 65536 (no checkpoint has that many layers)"), EngineError);
  }
  atlas::write_file_atomic(dir / "config.json", R"({"model_type": "qwen3_next", "hidden_size": 256, "intermediate_size": 512,
    "num_hidden_layers": 65536, "num_attention_heads": 4, "vocab_size": 512})");
  CHECK(read_hf_config(dir / "config.json").config.blocks.size() == 65536);  // the bound itself loads
}

TEST_CASE("hf config defaults and ignored fields") {
  const auto dir = atlas::test::scratch_dir("hf-config");
  atlas::write_file_atomic(dir / "config.json", R"({"model_type": "qwen3", "hidden_size": 1024, "intermediate_size": 3072,
    "num_hidden_layers": 28, "num_attention_heads": 16, "vocab_size": 151936,
    "rope_scaling": {"rope_type": "yarn", "factor": 4.0}})");
  const HfConfig h = read_hf_config(dir / "config.json");
  CHECK(h.config.arch == Arch::qwen3);
  CHECK(h.config.n_kv_heads == 16);
  CHECK(h.config.head_dim == 64);
  CHECK(h.config.max_seq_len == 32768);
  CHECK(h.config.rms_eps == 1e-6f);
  CHECK(h.config.rope_theta == 10000.0f);
  CHECK_FALSE(h.config.tied_embeddings);
  CHECK(h.ignored.at("rope_scaling") == R"({"factor":4.0,"rope_type":"yarn"})");
}

namespace {

/// A safetensors file from a raw header (padded like the reference writer) and `data_bytes` zero bytes.
std::filesystem::path raw_safetensors(const std::string& name, const std::string& header, std::size_t data_bytes) {
  std::string h = header;
  h.append((8 - h.size() % 8) % 8, ' ');
  std::string b(8, '\0');
  const std::uint64_t n = h.size();
  std::memcpy(b.data(), &n, 8);
  b += h;
  b.append(data_bytes, '\0');
  const auto path = atlas::test::scratch_dir("st-raw-" + name) / "model.safetensors";
  atlas::write_file_atomic(path, b);
  return path;
}

std::string read_error(const std::filesystem::path& p) {
  try {
    read_safetensors(p);
  } catch (const EngineError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

// Replayed from public bug reports: the format requires the sorted data_offsets to tile the
// data section exactly (safetensors' validate()); aliasing made v_proj silently equal k_proj.
TEST_CASE("safetensors: aliasing, overlapping, gapped and trailing data_offsets are rejected") {
  SUBCASE("a model whose v_proj aliases k_proj's bytes") {
    const Model m = make_preset_model("tiny-llama", 3);
    const auto dir = write_hf_dir("st-alias", m, DType::f32, 1);
    const auto file = dir / "model.safetensors";
    const std::string good = atlas::read_file(file);
    std::uint64_t hlen;
    std::memcpy(&hlen, good.data(), 8);
    auto h = nlohmann::json::parse(good.substr(8, hlen));
    const auto k = h["model.layers.0.self_attn.k_proj.weight"]["data_offsets"];
    h["model.layers.0.self_attn.v_proj.weight"]["data_offsets"] = k;
    std::string hs = h.dump();
    hs.append((8 - hs.size() % 8) % 8, ' ');
    std::string b(8, '\0');
    const std::uint64_t n = hs.size();
    std::memcpy(b.data(), &n, 8);
    atlas::write_file_atomic(file, b + hs + good.substr(8 + hlen));
    const std::string offs = k.dump();  // [begin,end]
    CHECK_ERROR(dir, "model.safetensors: safetensors tensor 'model.layers.0.self_attn.v_proj.weight': data_offsets " + offs +
                         " overlap tensor 'model.layers.0.self_attn.k_proj.weight' " + offs);
  }
  SUBCASE("partial overlap names the second tensor in offset order, not in header order") {
    const auto p = raw_safetensors("overlap", R"({"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12);
    CHECK(read_error(p) == p.string() + ": safetensors tensor 'a': data_offsets [4,12] overlap tensor 'b' [0,8] (the ranges must tile the data section exactly)");
  }
  SUBCASE("a gap between tensors") {
    const auto p = raw_safetensors("gap", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F16","shape":[4],"data_offsets":[12,20]}})", 20);
    CHECK(read_error(p) == p.string() + ": safetensors tensor 'b': data_offsets [12,20] leave a gap of 4 bytes after byte 8 (the ranges must tile the data section exactly)");
  }
  SUBCASE("a gap before the first tensor") {
    const auto p = raw_safetensors("gap0", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12);
    CHECK(read_error(p).find("tensor 'a': data_offsets [4,12] leave a gap of 4 bytes after byte 0") != std::string::npos);
  }
  SUBCASE("bytes after the last tensor") {
    const auto p = raw_safetensors("trailing", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 13);
    CHECK(read_error(p) == p.string() + ": safetensors data section: 5 bytes after the last tensor's end 8 belong to no tensor (the ranges must tile the data section exactly)");
  }
  SUBCASE("zero-length tensors still load, wherever a boundary is") {
    const auto p = raw_safetensors("empty", R"({"z0":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                            R"("z8":{"dtype":"BF16","shape":[0],"data_offsets":[8,8]},"b":{"dtype":"F16","shape":[2],"data_offsets":[8,12]},)"
                                            R"("z12":{"dtype":"F16","shape":[4,0],"data_offsets":[12,12]}})", 12);
    const SafetensorsFile f = read_safetensors(p);
    REQUIRE(f.tensors.size() == 5);
    CHECK(f.tensors.at("z0").data.empty());
    CHECK(f.tensors.at("z12").data.empty());
    CHECK(f.tensors.at("b").data.size() == 4);
    CHECK(f.tensors.at("z0").shape == std::vector<std::int64_t>{0, 3});
  }
  SUBCASE("an empty data section with no tensors") {
    const auto p = raw_safetensors("none", R"({"__metadata__":{"format":"pt"}})", 0);
    CHECK(read_safetensors(p).tensors.empty());
  }
}

// The engine's error told users of a safetensors directory to pass --tokenizer, which the
// loader ignored; LoadOptions::tokenizer_path (a tokenizer.json) is now honoured there.
TEST_CASE("safetensors: LoadOptions::tokenizer_path gives a directory its tokenizer.json") {
  const Model m = make_preset_model("tiny-llama", 5);
  const auto dir = write_hf_dir("st-tokenizer", m, DType::f32, 1);
  CHECK(load_model(dir).tokenizer == nullptr);
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_to_unicode(static_cast<unsigned char>(b))] = b;
  vocab["\xC4\xA0h"] = 256;
  const nlohmann::json j = {{"version", "1.0"},
                            {"added_tokens", nlohmann::json::array()},
                            {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
                            {"decoder", {{"type", "ByteLevel"}}},
                            {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"\xC4\xA0 h"}}}}};
  const auto tok = atlas::test::scratch_dir("st-tokenizer-json") / "tokenizer.json";
  atlas::write_file_atomic(tok, j.dump());
  LoadOptions o;
  o.tokenizer_path = tok;
  const Model r = load_model(dir, o);
  REQUIRE(r.tokenizer != nullptr);
  CHECK(r.tokenizer->encode(" h", false) == std::vector<int>{256});
  CHECK(r.source.metadata.at("tokenizer") == tok.string());
  // The given file wins over the directory's own, and a bad one is named.
  o.tokenizer_path = dir / "missing.json";
  CHECK_THROWS_WITH_AS(load_model(dir, o), doctest::Contains("st-tokenizer/missing.json: cannot open for reading"), atlas::InputError);
}
