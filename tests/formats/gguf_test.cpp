// GGUF reader: the real stories260K.gguf, and corrupted copies of it.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "common/atomic_file.hpp"
#include "engine/error.hpp"
#include "engine/formats/gguf.hpp"
#include "engine/formats/gguf_writer.hpp"
#include "engine/formats/presets.hpp"
#include "engine/formats/weight_builder.hpp"
#include "engine/model.hpp"
#include "engine/tokenizer/spm.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {

/// float32 array stored at `offset` in the llama2.c file (offsets from stories260K/SOURCE.md).
std::vector<float> llama2c_floats(const std::string& bin, std::size_t offset, std::size_t n) {
  std::vector<float> v(n);
  std::memcpy(v.data(), bin.data() + offset, n * 4);
  return v;
}

bool bit_equal(std::span<const float> a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), b.size() * 4) == 0;
}

/// Writes `bytes` to a scratch file and returns the EngineError message load_model gives.
std::string load_error(const std::string& test, const std::string& bytes) {
  const auto path = atlas::test::scratch_dir("gguf-" + test) / "bad.gguf";
  atlas::write_file_atomic(path, bytes);
  try {
    load_model(path);
  } catch (const EngineError& e) {
    return e.what();
  }
  return "(no error)";
}

template <class T>
void put(std::string& s, std::size_t at, T v) {
  std::memcpy(s.data() + at, &v, sizeof v);
}

}  // namespace

TEST_CASE("stories260K.gguf: config matches SOURCE.md") {
  const Model m = load_model(atlas::test::stories_gguf());
  const ModelConfig& c = m.config;
  CHECK(c.arch == Arch::llama);
  CHECK(c.name == "llama");
  CHECK(c.dim == 64);
  CHECK(c.hidden_dim == 172);
  CHECK(c.n_layers == 5);
  CHECK(c.n_heads == 8);
  CHECK(c.n_kv_heads == 4);
  CHECK(c.head_dim == 8);
  CHECK(c.vocab_size == 512);
  CHECK(c.max_seq_len == 2048);
  CHECK(c.rms_eps == 1e-5f);
  CHECK(c.rope_theta == 10000.0f);
  CHECK(c.rope_layout == RopeLayout::interleaved);
  CHECK_FALSE(c.qk_norm);
  CHECK_FALSE(c.tied_embeddings);  // output.weight is stored (a copy of token_embd)
  CHECK(m.source.format == "gguf");
  CHECK(m.source.path == atlas::test::stories_gguf());
  CHECK(m.source.metadata.at("general.architecture") == "llama");
  CHECK(m.source.metadata.at("gguf.version") == "3");
  CHECK(m.source.metadata.at("tokenizer.ggml.model") == "llama");
  REQUIRE(m.tokenizer != nullptr);
  CHECK(m.tokenizer->vocab_size() == 512);
  CHECK(m.tokenizer->bos_id() == 1);
  CHECK(m.tokenizer->eos_id() == 2);

  LoadOptions o;
  o.max_seq_len = 512;
  CHECK(load_model(atlas::test::stories_gguf(), o).config.max_seq_len == 512);
}

TEST_CASE("stories260K.gguf: header facts from SOURCE.md") {
  const GgufFile f = read_gguf(atlas::test::stories_gguf());
  CHECK(f.version == 3);
  CHECK(f.metadata.size() == 19);
  CHECK(f.tensors.size() == 48);
  CHECK(f.data_offset == 14176);
  CHECK(f.alignment == 32);
  CHECK(f.get_uint("llama.rope.dimension_count") == 8);
  CHECK(f.get_array("tokenizer.ggml.tokens").items.size() == 512);
  CHECK(f.get_uint("tokenizer.ggml.seperator_token_id") == 0xFFFFFFFFu);
  CHECK_THROWS_WITH_AS(f.get_string("llama.block_count"), doctest::Contains("llama.block_count"), EngineError);
  CHECK_THROWS_WITH_AS(f.get_uint("no.such.key"), doctest::Contains("no.such.key': missing"), EngineError);
}

TEST_CASE("stories260K.gguf: tensors are bit-identical to the llama2.c file's arrays") {
  const Model m = load_model(atlas::test::stories_gguf());
  const std::string bin = atlas::read_file(atlas::test::stories_bin());
  const auto& w = m.weights;
  CHECK(bit_equal(w.tok_embd, llama2c_floats(bin, 28, 32768)));
  CHECK(bit_equal(w.output, llama2c_floats(bin, 28, 32768)));
  CHECK(bit_equal(w.output_norm, llama2c_floats(bin, 1039900, 64)));
  for (std::size_t l = 0; l < 5; ++l) {
    CAPTURE(l);
    const auto& L = w.layers[l];
    CHECK(bit_equal(L.attn_norm, llama2c_floats(bin, 131100 + l * 64 * 4, 64)));
    CHECK(bit_equal(L.wq, llama2c_floats(bin, 132380 + l * 4096 * 4, 4096)));
    CHECK(bit_equal(L.wk, llama2c_floats(bin, 214300 + l * 2048 * 4, 2048)));
    CHECK(bit_equal(L.wv, llama2c_floats(bin, 255260 + l * 2048 * 4, 2048)));
    CHECK(bit_equal(L.wo, llama2c_floats(bin, 296220 + l * 4096 * 4, 4096)));
    CHECK(bit_equal(L.ffn_norm, llama2c_floats(bin, 378140 + l * 64 * 4, 64)));
    CHECK(bit_equal(L.w_gate, llama2c_floats(bin, 379420 + l * 11008 * 4, 11008)));
    CHECK(bit_equal(L.w_down, llama2c_floats(bin, 599580 + l * 11008 * 4, 11008)));
    CHECK(bit_equal(L.w_up, llama2c_floats(bin, 819740 + l * 11008 * 4, 11008)));
    CHECK(L.q_norm.empty());
  }
}

TEST_CASE("stories260K.gguf: F32 tensors are used in place from the mapping") {
  const GgufFile f = read_gguf(atlas::test::stories_gguf());
  const Model m = load_model(atlas::test::stories_gguf());
  // A second mapping of the same file has another address, so compare offsets within the file:
  // consecutive tensors keep their relative distance only when both point into one mapping.
  const auto* emb = reinterpret_cast<const std::byte*>(m.weights.tok_embd.data());
  const auto* q0 = reinterpret_cast<const std::byte*>(m.weights.layers[0].wq.data());
  std::uint64_t off_emb = 0, off_q0 = 0;
  for (const auto& t : f.tensors) {
    if (t.name == "token_embd.weight") off_emb = t.offset;
    if (t.name == "blk.0.attn_q.weight") off_q0 = t.offset;
  }
  CHECK(q0 - emb == static_cast<std::ptrdiff_t>(off_q0) - static_cast<std::ptrdiff_t>(off_emb));
}

TEST_CASE("corrupted GGUF files give errors naming file, field and value") {
  const std::string good = atlas::read_file(atlas::test::stories_gguf());
  const GgufFile f = read_gguf(atlas::test::stories_gguf());

  SUBCASE("bad magic") {
    std::string b = good;
    b[3] = 'X';
    const std::string e = load_error("magic", b);
    CHECK(e.find("bad.gguf: not a model file: no \"GGUF\" magic, and no llama2.c header") != std::string::npos);
    const auto path = atlas::test::scratch_dir("gguf-magic2") / "bad.gguf";
    atlas::write_file_atomic(path, b);
    CHECK_THROWS_WITH_AS(read_gguf(path), doctest::Contains("header field 'magic': expected \"GGUF\" (47475546), got 47475558"), EngineError);
  }
  SUBCASE("bad version") {
    std::string b = good;
    put<std::uint32_t>(b, 4, 7);
    const std::string e = load_error("version", b);
    CHECK(e.find("bad.gguf: GGUF header field 'version': 7 is not supported") != std::string::npos);
  }
  SUBCASE("truncated inside the metadata") {
    const std::string e = load_error("truncated", good.substr(0, 5000));
    CHECK(e.find("bad.gguf") != std::string::npos);
    CHECK(e.find("past the end of the file (5000 bytes)") != std::string::npos);
  }
  SUBCASE("tensor data past EOF") {
    const GgufTensorInfo* last = &f.tensors[0];
    for (const auto& t : f.tensors) {
      if (t.offset > last->offset) last = &t;
    }
    const std::string e = load_error("tensor-eof", good.substr(0, good.size() - 100));
    CHECK(e.find("bad.gguf: GGUF tensor '" + last->name + "': data at offset " + std::to_string(last->offset)) != std::string::npos);
  }
  SUBCASE("absurd n_kv") {
    std::string b = good;
    put<std::uint64_t>(b, 16, 1ULL << 40);
    const std::string e = load_error("nkv", b);
    CHECK(e.find("metadata_kv_count': 1099511627776 key/values cannot fit") != std::string::npos);
  }
  SUBCASE("string length past EOF") {
    std::string b = good;
    put<std::uint64_t>(b, 24, 1000000000000ULL);  // the first key's length
    const std::string e = load_error("strlen", b);
    CHECK(e.find("metadata key #0: string length 1000000000000 at byte offset 24 runs past the end") != std::string::npos);
  }
  SUBCASE("unknown metadata value type") {
    std::string b = good;
    std::uint64_t key_len;
    std::memcpy(&key_len, b.data() + 24, 8);
    const std::string key = b.substr(32, key_len);
    put<std::uint32_t>(b, 32 + key_len, 99);
    const std::string e = load_error("type", b);
    CHECK(e.find("metadata key '" + key + "': unknown value type 99") != std::string::npos);
  }
  SUBCASE("unsupported tensor type") {
    std::string b = good;
    const std::string name = "token_embd.weight";
    const auto at = b.find(name, 1000);  // after the metadata (the vocabulary) and inside the tensor infos
    REQUIRE(at != std::string::npos);
    put<std::uint32_t>(b, at + name.size() + 4 + 16, 12);  // n_dims (u32) + 2 x ne (i64), then the type
    const std::string e = load_error("ttype", b);
    CHECK(e.find("tensor 'token_embd.weight': type 12 (Q4_K) is not supported") != std::string::npos);
  }
  SUBCASE("metadata of the wrong type") {
    std::string b = good;
    const std::string key = "llama.block_count";
    const auto at = b.find(key);
    REQUIRE(at != std::string::npos);
    put<std::uint32_t>(b, at + key.size(), 6);  // uint32 -> float32 (same size)
    const std::string e = load_error("wrongtype", b);
    CHECK(e.find("metadata key 'llama.block_count': expected a non-negative integer, got float32") != std::string::npos);
  }
}

TEST_CASE("GGUF v2 (same layout as v3) loads the same model") {
  std::string b = atlas::read_file(atlas::test::stories_gguf());
  put<std::uint32_t>(b, 4, 2);
  const auto path = atlas::test::scratch_dir("gguf-v2") / "v2.gguf";
  atlas::write_file_atomic(path, b);
  const Model v2 = load_model(path);
  const Model v3 = load_model(atlas::test::stories_gguf());
  CHECK(v2.source.metadata.at("gguf.version") == "2");
  CHECK(v2.config.dim == 64);
  CHECK(std::memcmp(v2.weights.layers[4].w_down.data(), v3.weights.layers[4].w_down.data(), 11008 * 4) == 0);
}

namespace {

template <class T>
void append(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

}  // namespace

// Replayed from public bug reports: a tensor whose byte size overflows 64 bits was rejected
// with a message about block sizes.
TEST_CASE("GGUF: a tensor whose byte size overflows 64 bits is named as running past the data") {
  std::string b = "GGUF";
  append<std::uint32_t>(b, 3);
  append<std::uint64_t>(b, 1);  // tensors
  append<std::uint64_t>(b, 0);  // metadata key/values
  const std::string name = "blk.0.attn_q.weight";
  append<std::uint64_t>(b, name.size());
  b += name;
  append<std::uint32_t>(b, 3);
  for (std::int64_t ne : {4LL, 1073741823LL, 1073741825LL}) append<std::int64_t>(b, ne);  // 2^62 - 4 elements
  append<std::uint32_t>(b, 0);  // F32: 4 bytes each
  append<std::uint64_t>(b, 0);  // offset
  b.append(64, '\0');
  const auto path = atlas::test::scratch_dir("gguf-overflow") / "bad.gguf";
  atlas::write_file_atomic(path, b);
  CHECK_THROWS_WITH_AS(read_gguf(path),
                       doctest::Contains("bad.gguf: GGUF tensor 'blk.0.attn_q.weight': size of 4611686018427387900 F32 elements overflows 64 bits: "
                                         "the tensor runs past the end of the data"),
                       EngineError);
}

// Replayed from public bug reports: a BYTE-typed SentencePiece token whose text is not
// "<0xHH>" left that byte without a token.
TEST_CASE("GGUF: a BYTE token whose text is not <0xHH> is rejected at load, naming the id") {
  std::string b = atlas::read_file(atlas::test::stories_gguf());
  const auto at = b.find("<0x0A>");
  REQUIRE(at != std::string::npos);
  REQUIRE(b.find("<0x0A>", at + 1) == std::string::npos);
  b.replace(at, 6, "<0x-1>");  // same length: the layout is unchanged
  const std::string e = load_error("bytetoken", b);
  CHECK(e.find("bad.gguf: GGUF metadata key 'tokenizer.ggml.tokens': token id 13 is BYTE-typed (token_type 6) but its text \"<0x-1>\" is not <0xHH>") !=
        std::string::npos);
  // The SentencePiece builder itself refuses such a vocabulary too.
  SpmVocab v;
  v.pieces = {"<unk>", "<s>", "</s>", "<0xZZ>"};
  v.scores = {0, 0, 0, 0};
  v.types = {2, 3, 3, 6};
  CHECK_THROWS_WITH_AS(make_spm_tokenizer(v), doctest::Contains("token id 3 is BYTE-typed but its text \"<0xZZ>\" is not <0xHH>"), EngineError);
}

// Found by fuzz_gguf: block_count 2^31 - 1 sized the layer list before any tensor was looked
// up, exhausting memory.
TEST_CASE("GGUF: a block_count beyond the tensor count is rejected before anything is allocated") {
  std::string b = atlas::read_file(atlas::test::stories_gguf());
  const std::string key = "llama.block_count";
  const auto at = b.find(key);
  REQUIRE(at != std::string::npos);
  put<std::uint32_t>(b, at + key.size() + 4, 0x7FFFFFFF);  // after the u32 type tag
  const GgufFile f = read_gguf(atlas::test::stories_gguf());
  const std::string e = load_error("blockcount", b);
  CHECK(e.find("bad.gguf: GGUF metadata key 'llama.block_count': 2147483647 layers, but the file has only " + std::to_string(f.tensors.size()) +
               " tensors") != std::string::npos);
}

TEST_CASE("GGUF qwen3next without feed_forward_length: no dense FFN size (0), and only a dense SwiGLU layer asks for one") {
  // llama.cpp's converter writes no feed_forward_length for an all-MoE Qwen3-Next (35dd919).
  const Model tiny = make_preset_model("qwen3-next-tiny", 5, 256);
  const auto dir = atlas::test::scratch_dir("gguf-qwen3next-no-ffn");
  write_gguf(dir / "full.gguf", tiny);
  std::string b = atlas::read_file(dir / "full.gguf");
  const std::string key = "qwen3next.feed_forward_length";
  const auto at = b.find(key);
  REQUIRE(at != std::string::npos);
  b[at + key.size() - 1] = 'X';  // renamed: an unknown key, as if absent
  atlas::write_file_atomic(dir / "no-ffn.gguf", b);
  const Model m = load_model(dir / "no-ffn.gguf");
  CHECK(m.config.hidden_dim == 0);  // was a placeholder 1 before 35dd919
  CHECK(m.config.n_experts == tiny.config.n_experts);

  // validate_config: all-MoE blocks need no hidden_dim; a dense SwiGLU block (or a dense model,
  // no blocks listed) does, named with the file.
  ModelConfig c = m.config;
  c.hidden_dim = 0;
  CHECK_NOTHROW(validate_config(c, "m.gguf"));
  c.blocks[3].ffn = FfnKind::swiglu;
  CHECK_THROWS_WITH_AS(validate_config(c, "m.gguf"), doctest::Contains("m.gguf: hidden_dim = 0 (must be > 0)"), EngineError);
  ModelConfig dense = make_preset_model("tiny-qwen3", 1).config;
  dense.hidden_dim = 0;
  CHECK_THROWS_WITH_AS(validate_config(dense, "d.gguf"), doctest::Contains("d.gguf: hidden_dim = 0 (must be > 0)"), EngineError);
}

TEST_CASE("config: a head count times head size beyond 2^28 is rejected before q_dim is computed (fuzz_gguf: int overflow)") {
  // fuzz_gguf (2026-12-01) found a qwen3 header with head_count 587,202,562 and head size 4:
  // q_dim() = n_heads * head_dim overflowed int (UBSan) in assemble_weights. The replayed input
  // is fuzz/corpus/gguf/regress-q-dim-overflow (hand-minimized: those header fields and one 1x1
  // token_embd, no weights); it must reach the rule, which is then checked on its own.
  const auto regress = atlas::test::source_dir() / "fuzz/corpus/gguf/regress-q-dim-overflow";
  CHECK_THROWS_WITH_AS(load_model(regress), doctest::Contains("n_heads * head_dim = 587202562 * 4 is too large"), EngineError);
  ModelConfig c = make_preset_model("tiny-qwen3", 1).config;
  CHECK_NOTHROW(validate_config(c, "m.gguf"));
  c.n_heads = 587202562;
  c.n_kv_heads = 1;
  c.head_dim = 4;
  CHECK_THROWS_WITH_AS(validate_config(c, "m.gguf"),
                       doctest::Contains("m.gguf: n_heads * head_dim = 587202562 * 4 is too large"), EngineError);
  ModelConfig n = make_preset_model("qwen3-next-tiny", 1, 64).config;
  CHECK_NOTHROW(validate_config(n, "n.gguf"));
  n.gdn_v_heads = 1 << 20;
  n.gdn_v_head_dim = 1 << 10;
  CHECK_THROWS_WITH_AS(validate_config(n, "n.gguf"),
                       doctest::Contains("n.gguf: linear_num_value_heads * linear_value_head_dim = 1048576 * 1024 is too large"),
                       EngineError);
}
