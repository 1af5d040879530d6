// Inputs modelled on public bug reports and advisories against model loaders (the
// sources and the whole replay are in docs/fuzzing.md, "Replay of public bug reports"; the
// generator of every replayed input is fuzz/replay_reports.py). Each case here failed before its
// fix: it crashed, allocated without bound, or loaded garbage silently.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <list>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/backend.hpp"
#include "engine/error.hpp"
#include "engine/formats/gguf.hpp"
#include "engine/formats/safetensors.hpp"
#include "engine/model.hpp"
#include "engine/tokenizer/bpe.hpp"
#include "engine/tokenizer/spm.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {

template <class T>
void append(std::string& b, T v) {
  b.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void append_str(std::string& b, std::string_view s) {
  append<std::uint64_t>(b, s.size());
  b += s;
}

/// A tiny GGUF v3 writer for hand-made (and hand-broken) files: key/values in order, F32 tensors
/// laid out one after another (aligned to 32) unless a tensor is told to reuse another's offset.
struct GgufBuilder {
  std::string kv;
  std::uint64_t n_kv = 0;
  struct Tensor {
    std::string name;
    std::vector<std::int64_t> ne;
    std::string same_offset_as;  ///< non-empty: reuse that tensor's offset (aliasing)
  };
  std::vector<Tensor> tensors;

  void key(std::string_view k, std::uint32_t type) {
    append_str(kv, k);
    append<std::uint32_t>(kv, type);
    ++n_kv;
  }
  void u32(std::string_view k, std::uint32_t v) { key(k, 4), append(kv, v); }
  void f32(std::string_view k, float v) { key(k, 6), append(kv, v); }
  void str(std::string_view k, std::string_view v) { key(k, 8), append_str(kv, v); }
  void strs(std::string_view k, const std::vector<std::string>& v) {
    key(k, 9), append<std::uint32_t>(kv, 8), append<std::uint64_t>(kv, v.size());
    for (const auto& s : v) append_str(kv, s);
  }
  void f32s(std::string_view k, const std::vector<float>& v) {
    key(k, 9), append<std::uint32_t>(kv, 6), append<std::uint64_t>(kv, v.size());
    for (float x : v) append(kv, x);
  }
  void i32s(std::string_view k, const std::vector<int>& v) {
    key(k, 9), append<std::uint32_t>(kv, 5), append<std::uint64_t>(kv, v.size());
    for (int x : v) append<std::int32_t>(kv, x);
  }

  std::string bytes() const {
    std::string b = "GGUF";
    append<std::uint32_t>(b, 3);
    append<std::uint64_t>(b, tensors.size());
    append<std::uint64_t>(b, n_kv);
    b += kv;
    std::map<std::string, std::uint64_t> offsets;
    std::uint64_t at = 0;
    for (const auto& t : tensors) {
      std::uint64_t n = 1;
      for (auto d : t.ne) n *= static_cast<std::uint64_t>(d);
      if (t.same_offset_as.empty()) {
        offsets[t.name] = at;
        at += (n * 4 + 31) / 32 * 32;
      } else {
        offsets[t.name] = offsets.at(t.same_offset_as);
      }
      append_str(b, t.name);
      append<std::uint32_t>(b, static_cast<std::uint32_t>(t.ne.size()));
      for (auto d : t.ne) append<std::int64_t>(b, d);
      append<std::uint32_t>(b, 0);  // F32
      append<std::uint64_t>(b, offsets[t.name]);
    }
    b.append((32 - b.size() % 32) % 32, '\0');
    for (std::uint64_t i = 0; i < at / 4; ++i) append<float>(b, static_cast<float>(i % 7) / 16.0f - 0.1875f);
    return b;
  }
};

constexpr int kDim = 8, kHidden = 16, kHeads = 2, kKvHeads = 1;

/// "<unk>", "<s>", "</s>", the 256 "<0xHH>" byte pieces, then "▁", "h", "i", "▁h", "▁hi".
std::vector<std::string> spm_tokens() {
  std::vector<std::string> t = {"<unk>", "<s>", "</s>"};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    t.push_back(buf);
  }
  for (const char* p : {"\xE2\x96\x81", "h", "i", "\xE2\x96\x81h", "\xE2\x96\x81hi"}) t.push_back(p);
  return t;
}
std::vector<int> spm_types() {
  std::vector<int> t = {2, 3, 3};
  t.insert(t.end(), 256, 6);
  t.insert(t.end(), {1, 1, 1, 1, 1});
  return t;
}
std::vector<float> spm_scores() {
  std::vector<float> s(259, 0.0f);
  s.insert(s.end(), {-3.0f, -3.0f, -3.0f, -1.0f, -0.5f});
  return s;
}

struct TinyLlama {
  int vocab = 264, layers = 1, dim = kDim, heads = kHeads, kv_heads = kKvHeads;
  std::uint32_t context = 64;
  float eps = 1e-5f;
  std::vector<std::string> tokens = spm_tokens();
  std::vector<int> types = spm_types();
  std::vector<float> scores = spm_scores();
  std::map<std::string, std::uint32_t> ids = {{"tokenizer.ggml.bos_token_id", 1}, {"tokenizer.ggml.eos_token_id", 2},
                                              {"tokenizer.ggml.unknown_token_id", 0}};
  std::string alias;  ///< "a=b": tensor a at b's offset
  bool empty_key = false;
  bool gpt2 = false;  ///< a byte-level BPE vocabulary (tokens, token_type; no scores) instead

  /// The 256 byte pieces of GPT-2's byte-to-unicode map, then one control token with empty text.
  void use_gpt2_with_empty_control() {
    gpt2 = true;
    tokens.clear();
    for (int b = 0; b < 256; ++b) tokens.push_back(byte_to_unicode(static_cast<unsigned char>(b)));
    tokens.push_back("");
    types.assign(256, 1);
    types.push_back(3);
    vocab = 257;
  }

  std::string bytes() const {
    GgufBuilder g;
    g.str("general.architecture", "llama");
    g.u32("llama.embedding_length", static_cast<std::uint32_t>(dim));
    g.u32("llama.feed_forward_length", kHidden);
    g.u32("llama.block_count", static_cast<std::uint32_t>(layers));
    g.u32("llama.attention.head_count", static_cast<std::uint32_t>(heads));
    g.u32("llama.attention.head_count_kv", static_cast<std::uint32_t>(kv_heads));
    g.u32("llama.context_length", context);
    g.f32("llama.attention.layer_norm_rms_epsilon", eps);
    if (empty_key) g.u32("", 1);
    g.str("tokenizer.ggml.model", gpt2 ? "gpt2" : "llama");
    g.strs("tokenizer.ggml.tokens", tokens);
    if (!gpt2) g.f32s("tokenizer.ggml.scores", scores);
    g.i32s("tokenizer.ggml.token_type", types);
    if (gpt2) g.strs("tokenizer.ggml.merges", {});
    if (!gpt2)
      for (const auto& [k, v] : ids) g.u32(k, v);
    const std::int64_t d = dim, hd = dim / heads, h = kHidden;
    g.tensors = {{"token_embd.weight", {d, vocab}, ""}, {"output_norm.weight", {d}, ""}};
    for (int l = 0; l < layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      for (const GgufBuilder::Tensor& t : std::vector<GgufBuilder::Tensor>{
               {p + "attn_norm.weight", {d}, ""}, {p + "attn_q.weight", {d, heads * hd}, ""}, {p + "attn_k.weight", {d, kv_heads * hd}, ""},
               {p + "attn_v.weight", {d, kv_heads * hd}, ""}, {p + "attn_output.weight", {heads * hd, d}, ""}, {p + "ffn_norm.weight", {d}, ""},
               {p + "ffn_gate.weight", {d, h}, ""}, {p + "ffn_up.weight", {d, h}, ""}, {p + "ffn_down.weight", {h, d}, ""}})
        g.tensors.push_back(t);
    }
    if (const auto eq = alias.find('='); eq != std::string::npos) {
      for (auto& t : g.tensors) {
        if (t.name == alias.substr(0, eq)) t.same_offset_as = alias.substr(eq + 1);
      }
    }
    return g.bytes();
  }
};

std::filesystem::path write(const std::string& test, const std::string& name, const std::string& bytes) {
  const auto path = atlas::test::scratch_dir("replay-" + test) / name;
  atlas::write_file_atomic(path, bytes);
  return path;
}

/// The EngineError message of load_model(path), or "(no error)".
std::string load_error(const std::filesystem::path& path) {
  try {
    load_model(path);
  } catch (const EngineError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string deep(int levels) { return std::string(static_cast<std::size_t>(levels), '[') + std::string(static_cast<std::size_t>(levels), ']'); }

}  // namespace

TEST_CASE("replay GGUF: the hand-made tiny llama loads (control for the cases below)") {
  const Model m = load_model(write("gguf-ok", "ok.gguf", TinyLlama{}.bytes()));
  CHECK(m.config.vocab_size == 264);
  REQUIRE(m.tokenizer != nullptr);
  CHECK(m.tokenizer->vocab_size() == 264);
  CHECK(m.tokenizer->encode("hi", true) == std::vector<int>{1, 263});  // <s>, "▁hi"
  // Absent special-token keys take llama.cpp's SentencePiece defaults (bos 1, eos 2, unk 0).
  TinyLlama no_ids;
  no_ids.ids.clear();
  const Model d = load_model(write("gguf-no-ids", "ok.gguf", no_ids.bytes()));
  CHECK(d.tokenizer->bos_id() == 1);
  CHECK(d.tokenizer->eos_id() == 2);
}

// llama.cpp's loader requires each tensor at the running aligned end of the previous one
// ("tensor 'blk.0.attn_k.weight' has offset X, expected Y", ggml-org/llama.cpp#18674): two
// tensors over the same bytes loaded attn_v silently equal to attn_k here.
TEST_CASE("replay GGUF: a tensor whose data overlaps another's is rejected, naming both") {
  TinyLlama t;
  t.alias = "blk.0.attn_v.weight=blk.0.attn_k.weight";
  const std::string e = load_error(write("gguf-alias", "bad.gguf", t.bytes()));
  CHECK(e.find("bad.gguf: GGUF tensor 'blk.0.attn_v.weight': data [") != std::string::npos);
  CHECK(e.find(") overlaps tensor 'blk.0.attn_k.weight' [") != std::string::npos);
}

// llama.cpp check_tensor_dims: token_embd has one row per token. More tokens than rows let the
// tokenizer produce ids the embedding does not have (an error only at the first prompt).
TEST_CASE("replay GGUF: more tokens than token_embd rows is rejected at load") {
  TinyLlama t;
  t.vocab = 200;
  const std::string e = load_error(write("gguf-vocab", "bad.gguf", t.bytes()));
  CHECK(e.find("bad.gguf: GGUF metadata key 'tokenizer.ggml.tokens': 264 tokens, but token_embd.weight has only 200 rows") != std::string::npos);
}

TEST_CASE("replay GGUF: vocabulary arrays with values outside the format are rejected, naming the token") {
  SUBCASE("a NaN score (no merge order)") {
    TinyLlama t;
    t.scores[260] = std::numeric_limits<float>::quiet_NaN();
    CHECK(load_error(write("gguf-nan", "bad.gguf", t.bytes())).find("bad.gguf: GGUF metadata key 'tokenizer.ggml.scores': token id 260 has score NaN") !=
          std::string::npos);
  }
  SUBCASE("a token type outside llama_token_type (0..6)") {
    TinyLlama t;
    t.types[261] = 99;
    CHECK(load_error(write("gguf-type", "bad.gguf", t.bytes())).find("bad.gguf: GGUF metadata key 'tokenizer.ggml.token_type': token id 261 has type 99 (known: 0..6)") !=
          std::string::npos);
  }
  SUBCASE("eos 'none' (-1) for a SentencePiece vocabulary is named with the file and key") {
    TinyLlama t;
    t.ids["tokenizer.ggml.eos_token_id"] = 0xFFFFFFFFu;
    CHECK(load_error(write("gguf-eos", "bad.gguf", t.bytes())).find("bad.gguf: GGUF metadata key 'tokenizer.ggml.eos_token_id': missing or none") !=
          std::string::npos);
  }
}

// llama.cpp keeps control tokens whose text is empty (padding, unused slots); our BPE builder
// refused them ("added token '' has id 256", without the file), failing the whole load.
TEST_CASE("replay GGUF: a byte-level vocabulary with an empty control token loads; the token decodes to nothing") {
  TinyLlama t;
  t.use_gpt2_with_empty_control();
  const Model m = load_model(write("gguf-gpt2-empty", "ok.gguf", t.bytes()));
  REQUIRE(m.tokenizer != nullptr);
  CHECK(m.tokenizer->vocab_size() == 257);
  CHECK(m.tokenizer->token_bytes(-1, 256).empty());
  CHECK(m.tokenizer->encode("ab", false) == std::vector<int>{'a', 'b'});  // token i is byte i
}

TEST_CASE("replay GGUF: an empty key (llama.cpp#24263) and a non-finite epsilon are rejected") {
  TinyLlama k;
  k.empty_key = true;
  CHECK(load_error(write("gguf-key", "bad.gguf", k.bytes())).find("bad.gguf: GGUF metadata key #8: empty key") != std::string::npos);
  TinyLlama e;
  e.eps = std::numeric_limits<float>::infinity();
  CHECK(load_error(write("gguf-eps", "bad.gguf", e.bytes())).find("bad.gguf: rms_eps = inf") != std::string::npos);
}

TEST_CASE("replay GGUF: dimensions whose element count overflows say so (llama.cpp#27203)") {
  std::string b = "GGUF";
  append<std::uint32_t>(b, 3);
  append<std::uint64_t>(b, 1);
  append<std::uint64_t>(b, 0);
  append_str(b, "t");
  append<std::uint32_t>(b, 4);
  for (std::int64_t ne : {std::numeric_limits<std::int64_t>::max(), std::int64_t{2}, std::int64_t{1}, std::int64_t{1}}) append(b, ne);
  append<std::uint32_t>(b, 0);
  append<std::uint64_t>(b, 0);
  b.append(64, '\0');
  CHECK_THROWS_WITH_AS(read_gguf(write("gguf-ne", "bad.gguf", b)),
                       doctest::Contains("bad.gguf: GGUF tensor 't': dimension ne[1] = 2: the element count overflows 64 bits"), EngineError);
}

// llama2.c 'seq_len huge': the KV cache is sized by the file's context length unless the caller
// picks one. A header claiming 2^31 - 1 positions asked for terabytes (bad_alloc, or the OOM
// killer once pages were touched).
TEST_CASE("replay: a context length whose KV cache cannot fit in memory is a typed error naming the way out") {
  TinyLlama t;
  t.dim = 64;
  t.heads = 1;
  t.kv_heads = 1;
  t.layers = 2;
  t.context = 0x7FFFFFFF;  // 2 layers x 2^31 x 64 x 2 x 4 bytes = 2 TiB
  const Model m = load_model(write("kv-huge", "ctx.gguf", t.bytes()));
  BackendOptions o;
  o.name = "cpu";
  o.threads = 1;
  CHECK_THROWS_WITH_AS(make_backend(m, o), doctest::Contains("the KV cache for max_seq_len 2147483647 (the model's context length) needs 2048.0 GiB"),
                       EngineError);
  CHECK_THROWS_WITH_AS(make_backend(m, o), doctest::Contains("pass a smaller --max-seq-len"), EngineError);
  // Against the memory available now, not the machine's total (a shared box's other processes
  // and page cache hold the difference).
  CHECK_THROWS_WITH_AS(make_backend(m, o), doctest::Contains("GiB of memory available now (MemAvailable) of this machine's"), EngineError);
  o.max_seq_len = 64;  // the way out
  CHECK(make_backend(m, o)->max_seq_len() == 64);
}

// ---------------------------------------------------------------------------- safetensors

namespace {
std::string st_file(const std::string& header, const std::string& data) {
  std::string b;
  append<std::uint64_t>(b, header.size());
  return b + header + data;
}
std::string st_error(const std::string& test, const std::string& bytes) {
  try {
    read_safetensors(write(test, "bad.safetensors", bytes));
  } catch (const EngineError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("replay safetensors: JSON nested 100,000 deep is rejected before anything prints it (it overflowed the stack)") {
  const std::string h = R"({"a": {"dtype": )" + deep(100000) + R"(, "shape": [1], "data_offsets": [0, 4]}})";
  CHECK(st_error("st-deep", st_file(h, std::string(4, '\0'))).find("bad.safetensors: safetensors header: JSON nested deeper than 256 levels") !=
        std::string::npos);
}

TEST_CASE("replay safetensors: a tensor named twice, a non-string __metadata__ value and an oversized header are rejected") {
  const std::string dup = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "a": {"dtype": "F16", "shape": [4], "data_offsets": [0, 8]}})";
  CHECK(st_error("st-dup", st_file(dup, std::string(8, '\0'))).find("bad.safetensors: safetensors header: key \"a\" appears twice in one object") !=
        std::string::npos);
  const std::string meta = R"({"__metadata__": {"n": 5}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})";
  CHECK(st_error("st-meta", st_file(meta, std::string(4, '\0'))).find("bad.safetensors: safetensors __metadata__.n: expected a string, got 5") !=
        std::string::npos);
  // A header length within the file but above the format's 100,000,000-byte limit (a sparse file).
  const auto path = atlas::test::scratch_dir("replay-st-big") / "big.safetensors";
  std::string len;
  append<std::uint64_t>(len, 100'000'001);
  atlas::write_file_atomic(path, len + "{}");
  std::filesystem::resize_file(path, 8 + 100'000'001);
  CHECK_THROWS_WITH_AS(read_safetensors(path), doctest::Contains("big.safetensors: safetensors header length: 100000001 bytes is above the format's limit of 100000000"),
                       EngineError);
}

// ---------------------------------------------------------------------------- model directories

namespace {
/// A one-layer llama directory (config.json + model.safetensors) with `vocab` embedding rows.
std::filesystem::path llama_dir(const std::string& test, int vocab) {
  const auto dir = atlas::test::scratch_dir("replay-" + test);
  nlohmann::json cfg = {{"architectures", {"LlamaForCausalLM"}}, {"model_type", "llama"}, {"hidden_size", kDim}, {"intermediate_size", kHidden},
                        {"num_hidden_layers", 1}, {"num_attention_heads", kHeads}, {"num_key_value_heads", kKvHeads}, {"vocab_size", vocab},
                        {"max_position_embeddings", 64}, {"tie_word_embeddings", true}};
  atlas::write_file_atomic(dir / "config.json", cfg.dump());
  const int hd = kDim / kHeads;
  std::vector<SafetensorsTensor> t;
  std::list<std::vector<float>> values;  // SafetensorsTensor::values is a view: keep them alive (ASan)
  auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    values.emplace_back(static_cast<std::size_t>(n), 0.125f);
    t.push_back({name, DType::f32, shape, values.back()});
  };
  add("model.embed_tokens.weight", {vocab, kDim});
  add("model.norm.weight", {kDim});
  const std::string p = "model.layers.0.";
  add(p + "input_layernorm.weight", {kDim});
  add(p + "self_attn.q_proj.weight", {kHeads * hd, kDim});
  add(p + "self_attn.k_proj.weight", {kKvHeads * hd, kDim});
  add(p + "self_attn.v_proj.weight", {kKvHeads * hd, kDim});
  add(p + "self_attn.o_proj.weight", {kDim, kHeads * hd});
  add(p + "post_attention_layernorm.weight", {kDim});
  add(p + "mlp.gate_proj.weight", {kHidden, kDim});
  add(p + "mlp.up_proj.weight", {kHidden, kDim});
  add(p + "mlp.down_proj.weight", {kDim, kHidden});
  atlas::write_file_atomic(dir / "model.safetensors", safetensors_bytes(t, {}));
  return dir;
}

/// A GPT-2 style tokenizer.json: the 256 byte pieces, "Ġh" (256), <|endoftext|> (257).
nlohmann::json gpt2_tokenizer() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_to_unicode(static_cast<unsigned char>(b))] = b;
  vocab["\xC4\xA0h"] = 256;
  return {{"version", "1.0"},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
          {"added_tokens", {{{"id", 257}, {"content", "<|endoftext|>"}, {"special", true}}}},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"\xC4\xA0 h"}}}}};
}

std::string dir_error(const std::filesystem::path& dir) { return load_error(dir); }
}  // namespace

TEST_CASE("replay directories: the hand-made llama directory with its tokenizer.json loads (control)") {
  const auto dir = llama_dir("dir-ok", 300);
  atlas::write_file_atomic(dir / "tokenizer.json", gpt2_tokenizer().dump());
  const Model m = load_model(dir);
  REQUIRE(m.tokenizer != nullptr);
  CHECK(m.tokenizer->vocab_size() == 258);
  CHECK(m.tokenizer->encode(" h", false) == std::vector<int>{256});
}

TEST_CASE("replay directories: config.json and tokenizer.json nested 100,000 deep are rejected (they overflowed the stack)") {
  const auto dir = llama_dir("dir-deep-config", 300);
  atlas::write_file_atomic(dir / "config.json", R"({"model_type": "llama", "hidden_size": )" + deep(100000) + "}");
  CHECK(dir_error(dir).find("config.json: JSON nested deeper than 256 levels") != std::string::npos);
  const auto dir2 = llama_dir("dir-deep-tok", 300);
  std::string tok = gpt2_tokenizer().dump();
  tok.replace(tok.find("\"normalizer\":null"), 17, "\"normalizer\":" + deep(100000));
  atlas::write_file_atomic(dir2 / "tokenizer.json", tok);
  CHECK(dir_error(dir2).find("tokenizer.json: JSON nested deeper than 256 levels") != std::string::npos);
}

TEST_CASE("replay directories: tokenizer ids beyond the model's vocabulary are rejected while reading the file") {
  SUBCASE("an added token id 2^31 - 1 (vector::resize threw; 10^8 allocated 3 GiB)") {
    const auto dir = llama_dir("dir-added", 300);
    nlohmann::json t = gpt2_tokenizer();
    t["added_tokens"][0]["id"] = 2147483647;
    atlas::write_file_atomic(dir / "tokenizer.json", t.dump());
    CHECK(dir_error(dir).find("tokenizer.json: added_tokens[0].id: id 2147483647 is beyond the model's vocabulary (vocab_size 300)") !=
          std::string::npos);
    // Without a model, ids are bounded by 2^24.
    CHECK_THROWS_WITH_AS(load_tokenizer_json(dir / "tokenizer.json"), doctest::Contains("added_tokens[0].id: id 2147483647 is beyond 16777216"),
                         EngineError);
  }
  SUBCASE("a tokenizer larger than the embedding (an error only at the first prompt before)") {
    const auto dir = llama_dir("dir-small-embd", 100);
    atlas::write_file_atomic(dir / "tokenizer.json", gpt2_tokenizer().dump());
    CHECK(dir_error(dir).find("is beyond the model's vocabulary (vocab_size 100)") != std::string::npos);
  }
}

TEST_CASE("replay directories: a merge of tokens not in the vocabulary, added_tokens that is no list and a tokenizer_config.json that is no object are rejected") {
  const auto dir = llama_dir("dir-merge", 300);
  nlohmann::json t = gpt2_tokenizer();
  t["model"]["merges"].push_back("qq zz");  // huggingface/tokenizers: MergeTokenOutOfVocabulary
  atlas::write_file_atomic(dir / "tokenizer.json", t.dump());
  CHECK(dir_error(dir).find("tokenizer.json: model.merges[1]: \"qq zz\": token \"qq\" is not in model.vocab") != std::string::npos);
  nlohmann::json obj = gpt2_tokenizer();
  obj["added_tokens"] = {{"id", 257}, {"content", "<|endoftext|>"}};  // an object, not a list: the special tokens were skipped
  atlas::write_file_atomic(dir / "tokenizer.json", obj.dump());
  CHECK(dir_error(dir).find("tokenizer.json: added_tokens: expected a list, got {") != std::string::npos);
  atlas::write_file_atomic(dir / "tokenizer.json", gpt2_tokenizer().dump());
  atlas::write_file_atomic(dir / "tokenizer_config.json", "[1]");
  CHECK(dir_error(dir).find("tokenizer_config.json: (top level): expected an object, got [1]") != std::string::npos);
}

// Two pieces on one id: the second replaced the first, whose text then encoded as nothing.
TEST_CASE("replay directories: two tokenizer.json pieces with one id are rejected, naming both") {
  const auto dir = llama_dir("dir-dup-id", 300);
  nlohmann::json t = gpt2_tokenizer();
  t["model"]["vocab"]["zz"] = 97;  // 'a' is 97 as well (nlohmann reads keys in order: "a" first)
  atlas::write_file_atomic(dir / "tokenizer.json", t.dump());
  CHECK(dir_error(dir).find("tokenizer.json: model.vocab[\"zz\"]: id 97 is also the id of \"a\"") != std::string::npos);
}

TEST_CASE("replay directories: an index naming a shard that is not there names the index field") {
  const auto dir = llama_dir("dir-shard", 300);
  std::filesystem::rename(dir / "model.safetensors", dir / "model-00001-of-00002.safetensors");
  atlas::write_file_atomic(dir / "model.safetensors.index.json",
                           R"({"weight_map": {"model.norm.weight": "model-00001-of-00002.safetensors", "lm_head.weight": "model-00002-of-00002.safetensors"}})");
  CHECK(dir_error(dir).find("model.safetensors.index.json: field 'weight_map.lm_head.weight': shard \"model-00002-of-00002.safetensors\" does not exist") !=
        std::string::npos);
}

// ---------------------------------------------------------------------------- llama2.c tokenizer

TEST_CASE("replay llama2.c tokenizer: a NaN score is rejected naming the token") {
  std::string b;
  append<std::int32_t>(b, 8);
  int id = 0;
  for (const char* p : {"<unk>", "\n<s>\n", "\n</s>\n", " a"}) {
    append<float>(b, id == 3 ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
    append<std::int32_t>(b, static_cast<std::int32_t>(std::strlen(p)));
    b += p;
    ++id;
  }
  CHECK_THROWS_WITH_AS(load_llama2c_tokenizer(write("tok-nan", "tok.bin", b), 4), doctest::Contains("tok.bin: token 3 score is NaN"), EngineError);
}

// karpathy/llama2.c: a legacy checkpoint has no magic, so a header with dim 0 or n_heads 0 was
// reported only as "not a model file"; the error now says which field is wrong.
TEST_CASE("replay llama2.c: a legacy header with a zero or inconsistent field names the field in the not-a-model error") {
  auto legacy = [](std::vector<std::int32_t> fields) {
    std::string b;
    for (auto f : fields) append(b, f);
    return b + std::string(64, '\0');
  };
  CHECK(load_error(write("l2c-dim", "m.bin", legacy({0, 16, 1, 2, 1, 16, 8})))
            .find("m.bin: not a model file: no \"GGUF\" magic, and no llama2.c header (ak42 magic, or a legacy header matching the file size); "
                  "read as a legacy llama2.c header: header field dim = 0 is invalid (must be in [1, 65536])") != std::string::npos);
  CHECK(load_error(write("l2c-heads", "m.bin", legacy({8, 16, 1, 0, 1, 16, 8}))).find("header field n_heads = 0 is invalid") != std::string::npos);
  CHECK(load_error(write("l2c-div", "m.bin", legacy({8, 16, 1, 3, 1, 16, 8}))).find("header field n_heads = 3 does not divide dim = 8") !=
        std::string::npos);
}

// --tokenizer was once ignored for safetensors directories; the replay found it ignored for
// GGUF files as well (silently: the file's own tokenizer was used). It now replaces it.
TEST_CASE("replay GGUF: LoadOptions::tokenizer_path replaces the file's tokenizer (a tokenizer.json or a llama2.c tokenizer)") {
  const auto gguf = write("gguf-tokenizer-option", "m.gguf", TinyLlama{}.bytes());
  const auto dir = gguf.parent_path();
  atlas::write_file_atomic(dir / "tokenizer.json", gpt2_tokenizer().dump());
  LoadOptions o;
  o.tokenizer_path = dir / "tokenizer.json";
  const Model m = load_model(gguf, o);
  REQUIRE(m.tokenizer != nullptr);
  CHECK(m.tokenizer->vocab_size() == 258);  // the tokenizer.json's, not the file's 264
  CHECK(m.tokenizer->encode(" h", false) == std::vector<int>{256});
  CHECK(m.source.metadata.at("tokenizer") == o.tokenizer_path.string());
  // A llama2.c tokenizer file is read for the model's vocab_size (264 entries: this one has 4).
  std::string tok;
  append<std::int32_t>(tok, 8);
  for (const char* p : {"<unk>", "\n<s>\n", "\n</s>\n", " a"}) {
    append<float>(tok, 0.0f);
    append<std::int32_t>(tok, static_cast<std::int32_t>(std::strlen(p)));
    tok += p;
  }
  atlas::write_file_atomic(dir / "tok4.bin", tok);
  o.tokenizer_path = dir / "tok4.bin";
  CHECK_THROWS_WITH_AS(load_model(gguf, o), doctest::Contains("tok4.bin: truncated at byte 54 reading token 4 score (file has 54 bytes)"), EngineError);
  // Ids beyond the embedding are refused as for directories.
  o.tokenizer_path = dir / "tokenizer.json";
  nlohmann::json big = gpt2_tokenizer();
  big["added_tokens"][0]["id"] = 300;
  atlas::write_file_atomic(dir / "tokenizer.json", big.dump());
  CHECK_THROWS_WITH_AS(load_model(gguf, o), doctest::Contains("added_tokens[0].id: id 300 is beyond the model's vocabulary (vocab_size 264)"), EngineError);
}

// Review: the file's own tokenizer was still built first, so a vocabulary it cannot use (here more
// tokens than embedding rows; likewise an unsupported tokenizer.ggml.pre) failed the load before
// --tokenizer could replace it.
TEST_CASE("replay GGUF: LoadOptions::tokenizer_path rescues a file whose own tokenizer cannot load") {
  TinyLlama t;
  t.vocab = 260;  // 264 tokens in the file, 260 embedding rows
  const auto gguf = write("gguf-tokenizer-rescue", "m.gguf", t.bytes());
  CHECK(load_error(gguf).find("264 tokens, but token_embd.weight has only 260 rows") != std::string::npos);
  atlas::write_file_atomic(gguf.parent_path() / "tokenizer.json", gpt2_tokenizer().dump());
  LoadOptions o;
  o.tokenizer_path = gguf.parent_path() / "tokenizer.json";
  const Model m = load_model(gguf, o);
  REQUIRE(m.tokenizer != nullptr);
  CHECK(m.tokenizer->vocab_size() == 258);
  CHECK(m.config.vocab_size == 260);
}
