// The synthetic-weights table (engine/formats/synthetic_weights.hpp) against make_random_model,
// tensor by tensor and bit for bit: the table is what a backend generates on its own (the CUDA
// backend on the device), make_random_model what make-model writes, and the two are separate
// code (the dense fill order is written in both places). Also: the table has exactly the
// tensors the model has, and names a tensor the way the CUDA uploader asks for it.
#include <doctest/doctest.h>

#include <bit>
#include <filesystem>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/error.hpp"
#include "engine/formats/hf_config.hpp"
#include "engine/formats/load_for_backend.hpp"
#include "engine/formats/presets.hpp"
#include "engine/formats/synthetic_weights.hpp"
#include "engine/model.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "tests/test_data.hpp"

using namespace atlas::engine;

namespace {

/// Every non-empty tensor of a model under the table's names.
std::map<std::string, Weight> named_weights(const Model& m) {
  std::map<std::string, Weight> out;
  auto put = [&](const std::string& name, const Weight& w) {
    if (!w.empty()) out[name] = w;
  };
  const ModelWeights& w = m.weights;
  put("token_embd", w.tok_embd);
  put("output_norm", w.output_norm);
  if (!m.config.tied_embeddings) put("output", w.output);
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeights& L = w.layers[l];
    const std::string b = "blk." + std::to_string(l) + ".";
    put(b + "attn_norm", L.attn_norm);
    put(b + "attn_q", L.wq);
    put(b + "attn_k", L.wk);
    put(b + "attn_v", L.wv);
    put(b + "attn_output", L.wo);
    put(b + "attn_q_norm", L.q_norm);
    put(b + "attn_k_norm", L.k_norm);
    put(b + "ssm_in", L.gdn.in_qkvz);
    put(b + "ssm_ba", L.gdn.in_ba);
    put(b + "ssm_conv1d", L.gdn.conv1d);
    put(b + "ssm_dt.bias", L.gdn.dt_bias);
    put(b + "ssm_a", L.gdn.a);
    put(b + "ssm_norm", L.gdn.norm);
    put(b + "ssm_out", L.gdn.out);
    put(b + "ffn_norm", L.ffn_norm);
    put(b + "ffn_gate", L.w_gate);
    put(b + "ffn_up", L.w_up);
    put(b + "ffn_down", L.w_down);
    put(b + "ffn_gate_inp", L.moe.router);
    put(b + "ffn_gate_inp_shexp", L.moe.shared_gate);
    put(b + "ffn_gate_shexp", L.moe.gate_shexp);
    put(b + "ffn_up_shexp", L.moe.up_shexp);
    put(b + "ffn_down_shexp", L.moe.down_shexp);
    for (std::size_t e = 0; e < L.moe.gate_exps.size(); ++e) {
      std::string x = "[";  // appended: gcc 12 -O3 flags the concatenation with a false -Wrestrict
      x += std::to_string(e);
      x += ']';
      put(b + "ffn_gate_exps" + x, L.moe.gate_exps[e]);
      put(b + "ffn_up_exps" + x, L.moe.up_exps[e]);
      put(b + "ffn_down_exps" + x, L.moe.down_exps[e]);
    }
  }
  return out;
}

/// Checks every tensor of make_random_model(config, seed) equals the table's draw, bit for bit.
void check_table(const ModelConfig& config, std::uint64_t seed) {
  const Model m = make_random_model(config, seed);
  const auto have = named_weights(m);
  const auto table = synthetic_tensors(config, seed);
  CHECK(table.size() == have.size());
  for (const auto& [name, w] : have) {
    CAPTURE(name);
    const auto it = table.find(name);
    REQUIRE_MESSAGE(it != table.end(), "the table has no tensor " << name);
    REQUIRE(it->second.values == static_cast<std::int64_t>(w.size()));
    std::vector<float> want(w.size()), got(w.size());
    w.to_f32(0, w.size(), want.data());
    synthetic_engine_values(it->second, 0, static_cast<std::int64_t>(got.size()), got.data());
    std::size_t differ = 0, first = 0;
    for (std::size_t i = 0; i < got.size(); ++i)
      if (std::bit_cast<std::uint32_t>(got[i]) != std::bit_cast<std::uint32_t>(want[i]) && differ++ == 0) first = i;
    CHECK_MESSAGE(differ == 0, differ << " values differ, the first at " << first << ": " << got[first] << " vs " << want[first]);
    // A slice from the middle is the same draw (what a chunked generator asks for).
    if (got.size() > 3) {
      float mid[2];
      synthetic_engine_values(it->second, 2, 2, mid);
      CHECK(std::bit_cast<std::uint32_t>(mid[1]) == std::bit_cast<std::uint32_t>(want[3]));
    }
  }
}

}  // namespace

TEST_CASE("synthetic weights table equals make_random_model: dense presets (tied, untied, q/k norms)") {
  check_table(find_preset("tiny-llama").config, 3);
  check_table(find_preset("tiny-qwen3").config, 5);
  ModelConfig untied = find_preset("tiny-qwen3").config;
  untied.tied_embeddings = false;  // the output matrix gets its own stream, after the final norm
  check_table(untied, 7);
}

TEST_CASE("synthetic weights table equals make_random_model: qwen3-next presets and the HF variant config") {
  check_table(find_preset("qwen3-next-tiny").config, 17);
  check_table(find_preset("qwen3-next-tiny").config, 11);
  // norm_topk_prob false, a dense SwiGLU layer among moe ones, free layer_types.
  const auto variant = atlas::test::source_dir() / "tests/engine/qwen3_next_reference/config-variant.json";
  check_table(read_hf_config(variant).config, 17);
}

TEST_CASE("synthetic weights: different seeds give different streams; the maps are the engine transforms") {
  const auto a = synthetic_tensors(find_preset("qwen3-next-tiny").config, 1);
  const auto b = synthetic_tensors(find_preset("qwen3-next-tiny").config, 2);
  CHECK(a.at("blk.0.ssm_in").stream != b.at("blk.0.ssm_in").stream);
  CHECK(a.at("blk.0.ssm_a").map == SyntheticTensor::Map::neg_exp);
  CHECK(a.at("blk.0.attn_norm").map == SyntheticTensor::Map::one_plus);
  CHECK(a.at("blk.0.ssm_norm").map == SyntheticTensor::Map::none);
  CHECK(a.at("blk.0.ffn_gate_exps[3]").values == 64LL * 256);  // expert_hidden x dim
  float v = 0.0f;
  synthetic_engine_values(a.at("blk.0.ssm_a"), 0, 1, &v);
  CHECK(v < 0.0f);  // -exp(A_log): a decaying state
}

TEST_CASE("a preset loaded for a backend that draws its own weights: config, tokenizer and source, no weights") {
  LoadOptions lo;
  lo.max_seq_len = 512;
  const Model m = load_model_for_backend("preset:qwen3-next-tiny@23", lo, "cuda");
  const Model full = make_preset_model("qwen3-next-tiny", 23, 512);
  CHECK(m.weights.layers.empty());
  CHECK(m.weights.tok_embd.empty());
  CHECK(m.config.max_seq_len == 512);
  CHECK(m.config.blocks == full.config.blocks);
  CHECK(m.config.n_experts == full.config.n_experts);
  CHECK(m.source.format == "preset");
  CHECK(m.source.preset == "qwen3-next-tiny");
  CHECK(m.source.seed == 23);
  REQUIRE(m.tokenizer != nullptr);
  CHECK(m.tokenizer->encode("ab", false) == full.tokenizer->encode("ab", false));
  // Any other backend gets the weights built on the host (the CPU backend's reference).
  CHECK(load_model_for_backend("preset:qwen3-next-tiny@23", lo, "cpu").weights.layers.size() == 8);
  CHECK_THROWS_WITH_AS(load_model_for_backend("preset:no-such-preset@1", lo, "cuda"), doctest::Contains("no-such-preset"), EngineError);
  // A file is loaded as load_model loads it, whatever the backend.
  const auto stories = atlas::test::data_dir() / "models/stories260K/stories260K.bin";
  CHECK(!load_model_for_backend(stories, {}, "cuda").weights.layers.empty());
}
