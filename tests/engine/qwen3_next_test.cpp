// Qwen3-Next on the CPU backend: the Gated DeltaNet chunked form against its recurrence, the
// whole model against Hugging Face transformers (tests/engine/qwen3_next_reference/, made on the
// H200 machine by make_reference.py), the safetensors / GGUF loaders, prefix reuse with
// recurrent-state checkpoints, and typed errors for bad configs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "engine/backend.hpp"
#include "engine/cpu/gdn.hpp"
#include "engine/cpu/ops.hpp"
#include "engine/error.hpp"
#include "engine/formats/dtype.hpp"
#include "engine/formats/gguf.hpp"
#include "engine/formats/gguf_writer.hpp"
#include "engine/formats/hf_config.hpp"
#include "engine/formats/presets.hpp"
#include "engine/formats/qwen3_next_hf_writer.hpp"
#include "engine/formats/qwen3_next_tensors.hpp"
#include "engine/formats/safetensors.hpp"
#include "engine/sampler.hpp"
#include "engine/session.hpp"
#include "tests/test_data.hpp"
#include "tests/typed_weights.hpp"

using namespace atlas::engine;

namespace {

double rel_l2(std::span<const float> a, std::span<const float> b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    den += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

std::vector<float> base64_floats(const std::string& s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::string bytes;
  int acc = 0, bits = 0;
  for (char c : s) {
    const int v = val(c);
    if (v < 0) continue;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

const Model& tiny() {
  static const Model m = make_preset_model("qwen3-next-tiny", 17, 1024);
  return m;
}

std::filesystem::path reference_dir() { return atlas::test::source_dir() / "tests/engine/qwen3_next_reference"; }

/// load_model with tiny()'s 1,024-token context (KV cache sized as the preset's, not the file's
/// 4,096).
Model load_1k_context(const std::filesystem::path& path) {
  LoadOptions lo;
  lo.max_seq_len = 1024;
  return load_model(path, lo);
}

/// Writes an HF directory: `config` (a config.json) and model.safetensors holding the reference
/// script's values for every tensor that config implies, stored as `dtype`.
void write_hf_dir(const std::filesystem::path& dir, const std::filesystem::path& config, DType dtype) {
  std::filesystem::copy_file(config, dir / "config.json");
  atlas::write_file_atomic(dir / "model.safetensors", qwen3_next_hf_safetensors(read_hf_config(dir / "config.json").config, 17, dtype));
}

struct Agreement {
  double worst_rel = 0.0;
  int decided = 0, agreed = 0;
};

/// Compares `model` on the CPU backend with HF's reference: last-prompt-position logits, then
/// 128 teacher-forced steps (HF's greedy tokens fed back) whose argmax must equal HF's token on
/// every step HF decided by a margin > 1e-3.
Agreement compare_with_hf(const Model& model, const char* reference = "reference.json") {
  const auto ref = nlohmann::json::parse(atlas::read_file(reference_dir() / reference));
  BackendOptions o;
  o.threads = 2;
  auto backend = make_backend(model, o);
  Agreement a;
  for (const auto& c : ref["cases"]) {
    const auto prompt = c["prompt"].get<std::vector<int>>();
    const auto want = base64_floats(c["last_logits_f32_b64"].get<std::string>());
    REQUIRE(want.size() == static_cast<std::size_t>(model.config.vocab_size));
    auto logits = backend->forward(prompt, 0);
    const double rel = rel_l2(logits, want);
    INFO("prompt of " << prompt.size() << " tokens: logits relative L2 " << rel);
    CHECK(rel <= 1e-4);
    a.worst_rel = std::max(a.worst_rel, rel);
    const auto greedy = c["greedy"].get<std::vector<int>>();
    const auto margins = c["margins"].get<std::vector<double>>();
    int pos = static_cast<int>(prompt.size());
    for (std::size_t i = 0; i < greedy.size(); ++i) {
      if (margins[i] > 1e-3) {
        ++a.decided;
        const int mine = argmax(logits);
        INFO("step " << i << " of the " << prompt.size() << "-token prompt: HF margin " << margins[i]);
        CHECK(mine == greedy[i]);
        a.agreed += mine == greedy[i];
      }
      const int tok = greedy[i];
      logits = backend->forward(std::span<const int>(&tok, 1), pos++);
    }
  }
  MESSAGE("HF agreement: worst logits rel L2 " << a.worst_rel << ", " << a.agreed << "/" << a.decided << " decided greedy steps equal");
  return a;
}

}  // namespace

TEST_CASE("gdn: the chunked form (chunk 64) equals the recurrence over 300 tokens") {
  const int n = 300, dk = 64, dv = 48;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::uniform_real_distribution<float> ud(0.0f, 1.0f);
  std::vector<float> q(n * dk), k(n * dk), v(n * dv), g(n), beta(n);
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < dk; ++i) q[t * dk + i] = nd(rng), k[t * dk + i] = nd(rng);
    cpu::l2_normalize(&q[t * dk], dk, 1e-6f);
    cpu::l2_normalize(&k[t * dk], dk, 1e-6f);
    for (int i = 0; i < dk; ++i) q[t * dk + i] /= std::sqrt(static_cast<float>(dk));
    for (int i = 0; i < dv; ++i) v[t * dv + i] = nd(rng);
    g[t] = -0.3f * ud(rng);  // slow decay: the state remembers across chunk boundaries
    beta[t] = cpu::sigmoid(nd(rng));
  }
  std::vector<float> o_rec(n * dv), o_chunk(n * dv), s_rec(dk * dv, 0.0f), s_chunk(dk * dv, 0.0f);
  // A non-zero initial state, as when a prefill continues a checkpointed sequence.
  for (auto& x : s_rec) x = 0.1f * nd(rng);
  s_chunk = s_rec;
  cpu::gdn_recurrent(s_rec.data(), {q.data(), k.data(), v.data(), g.data(), beta.data(), o_rec.data(), dk, dk, dv, 1, dv}, n, dk, dv);
  cpu::gdn_chunked(s_chunk.data(), {q.data(), k.data(), v.data(), g.data(), beta.data(), o_chunk.data(), dk, dk, dv, 1, dv}, n, dk, dv, 64);
  const double ro = rel_l2(o_chunk, o_rec), rs = rel_l2(s_chunk, s_rec);
  MESSAGE("chunked vs recurrent: outputs rel L2 " << ro << ", final state rel L2 " << rs);
  CHECK(ro <= 1e-5);
  CHECK(rs <= 1e-5);
  // And it is not trivially equal: a wrong decay changes the output.
  std::vector<float> g2 = g;
  g2[100] -= 1.0f;
  std::vector<float> s3(dk * dv, 0.0f), o3(n * dv);
  cpu::gdn_chunked(s3.data(), {q.data(), k.data(), v.data(), g2.data(), beta.data(), o3.data(), dk, dk, dv, 1, dv}, n, dk, dv, 64);
  CHECK(rel_l2(o3, o_rec) > 1e-3);
}

TEST_CASE("gdn: causal conv1d state carries across calls") {
  const int channels = 3, kernel = 4, n = 7;
  std::vector<float> x(n * channels), w(channels * kernel), y_all(n * channels), y_split(n * channels);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i) - 0.5f;
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i + 1);
  std::vector<float> s1(channels * (kernel - 1), 0.0f), s2 = s1;
  cpu::causal_conv1d_silu(x.data(), y_all.data(), n, channels, channels, w.data(), kernel, s1.data());
  cpu::causal_conv1d_silu(x.data(), y_split.data(), 2, channels, channels, w.data(), kernel, s2.data());
  cpu::causal_conv1d_silu(x.data() + 2 * channels, y_split.data() + 2 * channels, 5, channels, channels, w.data(), kernel, s2.data());
  for (std::size_t i = 0; i < y_all.size(); ++i) CHECK(y_split[i] == doctest::Approx(y_all[i]).epsilon(1e-6));
  CHECK(s1 == s2);
  // Channel 0 at t = 0: only the newest tap sees input; silu(w[3] * x[0]).
  const float pre = w[3] * x[0];
  CHECK(y_all[0] == doctest::Approx(pre / (1.0f + std::exp(-pre))));
}

TEST_CASE("qwen3-next-tiny: the preset keeps the release's awkward ratios") {
  const ModelConfig& c = tiny().config;
  CHECK(c.arch == Arch::qwen3_next);
  CHECK(c.gdn_v_heads > c.gdn_k_heads);
  CHECK(c.head_dim != c.gdn_k_head_dim);
  CHECK(c.n_layers >= 8);
  int full = 0;
  for (int l = 0; l < c.n_layers; ++l) full += c.block(l).mixer == MixerKind::gated_attention;
  CHECK(full == c.n_layers / 4);
  CHECK(c.block(3).mixer == MixerKind::gated_attention);
  CHECK(c.block(0).mixer == MixerKind::gated_deltanet);
  CHECK(c.n_experts_used > 1);
  CHECK(c.shared_expert_hidden_dim > 0);
  CHECK(c.rot_dim() == c.head_dim / 4);
  CHECK(!c.is_dense());
  // The release dims: about 80B parameters, about 3B active.
  const auto& big = find_preset("qwen3-next-80b-a3b").config;
  CHECK(big.parameter_count() > 78'000'000'000LL);
  CHECK(big.parameter_count() < 82'000'000'000LL);
  CHECK(big.active_parameter_count() < 4'000'000'000LL);
  // Too big to build as float32 here: a clear error, not an allocation failure.
  CHECK_THROWS_WITH_AS(make_preset_model("qwen3-next-80b-a3b", 0), doctest::Contains("GB as float32 host weights"), EngineError);
}

TEST_CASE("qwen3-next-tiny: one 300-token prefill (chunked GDN) equals token-by-token decode (recurrent)") {
  BackendOptions o;
  o.threads = 2;
  auto a = make_backend(tiny(), o);
  auto b = make_backend(tiny(), o);
  std::vector<int> prompt(300);
  for (int i = 0; i < 300; ++i) prompt[i] = (i * 37 + 11) % 512;
  const auto la = a->forward(prompt, 0);
  std::vector<float> prefill(la.begin(), la.end());
  std::span<const float> lb;
  for (int i = 0; i < 300; ++i) lb = b->forward(std::span<const int>(&prompt[i], 1), i);
  const double rel = rel_l2(prefill, lb);
  MESSAGE("300-token prefill vs 300 decode steps: logits rel L2 " << rel);
  CHECK(rel <= 1e-5);
}

TEST_CASE("qwen3-next-tiny matches Hugging Face transformers (preset weights)") {
  const Agreement a = compare_with_hf(tiny());
  CHECK(a.decided >= 300);
  CHECK(a.agreed == a.decided);
}

TEST_CASE("qwen3-next: GGUF (llama.cpp qwen3next layout) round trip matches Hugging Face") {
  const auto dir = atlas::test::scratch_dir("qwen3_next_gguf");
  write_gguf(dir / "tiny.gguf", tiny());
  const Model m = load_1k_context(dir / "tiny.gguf");
  CHECK(m.config.arch == Arch::qwen3_next);
  CHECK(m.config.blocks == tiny().config.blocks);
  CHECK(m.config.rot_dim() == tiny().config.rot_dim());
  const GgufFile f = read_gguf(dir / "tiny.gguf");
  CHECK(f.get_string("general.architecture") == "qwen3next");
  CHECK(f.get_uint("qwen3next.ssm.group_count") == 4);
  CHECK(f.get_uint("qwen3next.ssm.time_step_rank") == 8);
  const Agreement a = compare_with_hf(m);
  CHECK(a.agreed == a.decided);
  // llama.cpp's current converter splits ssm_in into attn_qkv ([q | k | v]) + attn_gate (z).
  GgufWriteOptions split;
  split.qwen3next_split_qkv = true;
  write_gguf(dir / "split.gguf", tiny(), split);
  const GgufFile fs = read_gguf(dir / "split.gguf");
  CHECK(std::any_of(fs.tensors.begin(), fs.tensors.end(), [](const GgufTensorInfo& t) { return t.name == "blk.0.attn_qkv.weight"; }));
  CHECK(std::none_of(fs.tensors.begin(), fs.tensors.end(), [](const GgufTensorInfo& t) { return t.name == "blk.0.ssm_in.weight"; }));
  const Model ms = load_1k_context(dir / "split.gguf");
  REQUIRE(ms.weights.layers[0].gdn.in_qkvz.size() == tiny().weights.layers[0].gdn.in_qkvz.size());
  CHECK(std::equal(ms.weights.layers[0].gdn.in_qkvz.begin(), ms.weights.layers[0].gdn.in_qkvz.end(),
                   tiny().weights.layers[0].gdn.in_qkvz.begin()));  // the regrouping restores HF's rows exactly
  const Agreement b = compare_with_hf(ms);
  CHECK(b.agreed == b.decided);
}

TEST_CASE("qwen3-next: a Hugging Face directory (HF's own config.json, per-expert tensors) matches Hugging Face") {
  const auto dir = atlas::test::scratch_dir("qwen3_next_hf");
  // HF's own config.json and the HF-space values the reference script fed transformers, under
  // checkpoint names.
  write_hf_dir(dir, reference_dir() / "config.json", DType::f32);
  const Model m = load_1k_context(dir);
  CHECK(m.config.arch == Arch::qwen3_next);
  CHECK(m.config.blocks == tiny().config.blocks);
  CHECK(m.config.rot_dim() == tiny().config.rot_dim());
  CHECK(m.config.n_experts_used == tiny().config.n_experts_used);
  const Agreement a = compare_with_hf(m);
  CHECK(a.agreed == a.decided);
}

TEST_CASE("qwen3-next variant: norm_topk_prob false, a dense SwiGLU layer, free layer_types; matches Hugging Face") {
  const auto dir = atlas::test::scratch_dir("qwen3_next_variant");
  write_hf_dir(dir, reference_dir() / "config-variant.json", DType::f32);
  const Model m = load_1k_context(dir);
  const ModelConfig& c = m.config;
  CHECK(!c.norm_topk_prob);
  CHECK(c.block(1).mixer == MixerKind::gated_attention);
  CHECK(c.block(3).mixer == MixerKind::gated_deltanet);
  CHECK(c.block(5).ffn == FfnKind::swiglu);
  CHECK(c.block(4).ffn == FfnKind::moe);
  CHECK(c.hidden_dim == 96);
  const Agreement a = compare_with_hf(m, "reference-variant.json");
  CHECK(a.decided >= 300);
  CHECK(a.agreed == a.decided);
  // GGUF qwen3next cannot express these layer kinds: the writer says so instead of writing a
  // file llama.cpp would run differently.
  CHECK_THROWS_WITH_AS(write_gguf(dir / "v.gguf", m), doctest::Contains("layer kinds"), EngineError);
}

TEST_CASE("qwen3-next: a bf16 Hugging Face checkpoint loads with the engine transforms applied to the rounded values") {
  const auto dir = atlas::test::scratch_dir("qwen3_next_bf16");
  write_hf_dir(dir, reference_dir() / "config.json", DType::bf16);
  const Model m = load_1k_context(dir);
  auto hf_value = [&](const std::string& name, std::int64_t k) {
    for (const auto& t : qwen3_next_hf_tensors(m.config)) {
      if (t.hf_name != name) continue;
      std::vector<float> v(static_cast<std::size_t>(k + 1));
      qwen3_next_random_values(t, 17, v.data(), k + 1);
      return bf16_to_f32(f32_to_bf16(v[static_cast<std::size_t>(k)]));
    }
    FAIL("no tensor " << name);
    return 0.0f;
  };
  const LayerWeights& L0 = m.weights.layers[0];
  CHECK(L0.gdn.in_qkvz[5] == hf_value("model.layers.0.linear_attn.in_proj_qkvz.weight", 5));
  CHECK(L0.attn_norm[3] == 1.0f + hf_value("model.layers.0.input_layernorm.weight", 3));       // zero-centred: 1 + w
  CHECK(L0.gdn.a[2] == -std::exp(hf_value("model.layers.0.linear_attn.A_log", 2)));            // ssm_a = -exp(A_log)
  CHECK(L0.gdn.norm[1] == hf_value("model.layers.0.linear_attn.norm.weight", 1));              // gated norm: as stored
  CHECK(m.weights.layers[1].moe.down_exps[3][7] == hf_value("model.layers.1.mlp.experts.3.down_proj.weight", 7));
  // bf16 rounding moves the logits a little, not the model: still close to HF's fp32 logits.
  const auto ref = nlohmann::json::parse(atlas::read_file(reference_dir() / "reference.json"));
  auto backend = make_backend(m, {});
  const auto& c0 = ref["cases"][2];
  const double rel = rel_l2(backend->forward(c0["prompt"].get<std::vector<int>>(), 0), base64_floats(c0["last_logits_f32_b64"].get<std::string>()));
  MESSAGE("bf16 checkpoint vs HF fp32: logits rel L2 " << rel);
  CHECK(rel < 0.1);  // measured 0.056; a wrong transform (a missing +1, A_log not negated) gives O(1)
}

TEST_CASE("qwen3-next: bad configs and checkpoints give typed errors naming file, field and value") {
  const auto dir = atlas::test::scratch_dir("qwen3_next_bad");
  auto base = nlohmann::json::parse(atlas::read_file(reference_dir() / "config.json"));
  auto expect = [&](nlohmann::json j, const std::string& needle) {
    atlas::write_file_atomic(dir / "config.json", j.dump());
    INFO(needle);
    CHECK_THROWS_WITH_AS(read_hf_config(dir / "config.json"), doctest::Contains(needle.c_str()), EngineError);
  };
  auto j = base;
  j["linear_num_value_heads"] = 6;
  expect(j, "linear_num_value_heads");
  j = base;
  j["num_experts_per_tok"] = 64;
  expect(j, "num_experts_per_tok");
  j = base;
  j["layer_types"][2] = "sliding_attention";
  expect(j, "layer_types[2]");
  j = base;
  j["layer_types"].erase(0);
  expect(j, "layer_types");
  // A missing shared-expert gate and a wrong expert count in the weights.
  const ModelConfig& c = tiny().config;
  std::vector<std::vector<float>> values;
  std::vector<SafetensorsTensor> ts;
  for (const auto& t : qwen3_next_hf_tensors(c)) {
    if (t.hf_name == "model.layers.2.mlp.shared_expert_gate.weight") continue;
    std::int64_t n = 1;
    for (auto d : t.shape) n *= d;
    values.emplace_back(static_cast<std::size_t>(n), 0.0f);
    ts.push_back({t.hf_name, DType::f32, t.shape, values.back()});
  }
  atlas::write_file_atomic(dir / "config.json", base.dump());
  atlas::write_file_atomic(dir / "model.safetensors", safetensors_bytes(ts));
  CHECK_THROWS_WITH_AS(load_model(dir), doctest::Contains("model.layers.2.mlp.shared_expert_gate.weight is missing"), EngineError);
  j = base;
  j["num_experts"] = 48;
  atlas::write_file_atomic(dir / "config.json", j.dump());
  CHECK_THROWS_WITH_AS(load_model(dir), doctest::Contains("tensor model.layers.0.mlp.gate.weight has shape [32,256], expected [48,256]"), EngineError);
}

TEST_CASE("qwen3-next: the CUDA backend takes a hybrid model (no block kind is refused)") {
  // Every block kind has device kernels: on a machine without a GPU the CUDA backend fails for
  // the device (a MachineError) or the module (an EngineError), never for the model's layer kinds
  // (it used to refuse gated_deltanet). The GPU tests check what it computes.
  BackendOptions o;
  o.name = "cuda";
  const Model& m = tiny();
  try {
    auto b = make_backend(m, o);
    CHECK(b->name() == "cuda");
    CHECK(b->has_recurrent_state());
  } catch (const atlas::Error& e) {
    const std::string what = e.what();
    CHECK(what.find("cuda") != std::string::npos);
    CHECK(what.find("no CUDA kernels") == std::string::npos);
    CHECK(what.find("gated_deltanet") == std::string::npos);
  }
}

TEST_CASE("qwen3-next: session prefix reuse resumes from recurrent-state checkpoints, tokens equal a cold prefill") {
  BackendOptions o;
  o.threads = 2;
  auto warm_backend = make_backend(tiny(), o);
  Session warm(*warm_backend);
  std::vector<int> turn1(90);
  for (int i = 0; i < 90; ++i) turn1[i] = (i * 13 + 5) % 512;
  GenerateRequest r;
  r.prompt_ids = turn1;
  r.max_new_tokens = 12;
  const auto out1 = warm.generate(r);
  CHECK(out1.prefix_reused == 0);
  CHECK(warm_backend->checkpoints() == std::vector<int>{89, 90, 90 + 11});
  // Turn 2: the whole conversation so far plus a new message.
  std::vector<int> turn2 = turn1;
  turn2.insert(turn2.end(), out1.output_ids.begin(), out1.output_ids.end());
  for (int i = 0; i < 20; ++i) turn2.push_back((i * 7 + 3) % 512);
  r.prompt_ids = turn2;
  const auto out2 = warm.generate(r);
  CHECK(out2.prefix_reused == 90 + 11);  // the end-of-turn checkpoint (the last output is not yet fed)
  auto cold_backend = make_backend(tiny(), o);
  Session cold(*cold_backend);
  const auto ref = cold.generate(r);
  CHECK(ref.prefix_reused == 0);
  CHECK(out2.output_ids == ref.output_ids);
  // A prompt diverging inside turn 1 falls back to a checkpoint within the common prefix (none
  // there: a full prefill) and still matches a cold run.
  std::vector<int> other(turn1.begin(), turn1.begin() + 50);
  other.push_back(1);
  r.prompt_ids = other;
  const auto out3 = warm.generate(r);
  CHECK(out3.prefix_reused == 0);
  Session cold2(*cold_backend);
  cold2.reset();
  CHECK(cold2.generate(r).output_ids == out3.output_ids);
  // The same prompt again (a retry, a warm TTFT run) reuses all but its last token.
  const auto again = warm.generate(r);
  CHECK(again.prefix_reused == static_cast<int>(other.size()) - 1);
  CHECK(again.output_ids == out3.output_ids);
  // The backend refuses to resume where it has no state.
  CHECK_THROWS_WITH_AS(warm_backend->forward(std::vector<int>{1}, 77), doctest::Contains("cannot resume at position 77"), EngineError);
}

TEST_CASE("qwen3-next: a decode step reports the hybrid stages, each kind its own") {
  BackendOptions o;
  o.threads = 1;
  auto b = make_backend(tiny(), o);
  b->forward(std::vector<int>{1, 2, 3}, 0);
  b->stage_timer().reset();
  b->stage_timer().set_enabled(true);
  b->forward(std::vector<int>{4}, 3);
  b->stage_timer().set_enabled(false);
  const auto& t = b->stage_timer().totals();
  auto calls = [&](Stage s) { return t.calls[static_cast<std::size_t>(s)]; };
  // Each layer's kinds from the model, not from a count written here: a preset with another
  // layout is checked the same way. One decode step is one call of each stage of each block.
  const ModelConfig& c = tiny().config;
  long long deltanet = 0, gated_attention = 0, moe = 0, swiglu = 0;
  for (int l = 0; l < c.n_layers; ++l) {
    deltanet += c.block(l).mixer == MixerKind::gated_deltanet;
    gated_attention += c.block(l).mixer == MixerKind::gated_attention;
    moe += c.block(l).ffn == FfnKind::moe;
    swiglu += c.block(l).ffn == FfnKind::swiglu;
  }
  REQUIRE(deltanet > 0);  // the model has every hybrid kind, so each check below can fail
  REQUIRE(gated_attention > 0);
  REQUIRE(moe > 0);
  for (Stage s : {Stage::gdn_in_proj, Stage::gdn_conv, Stage::gdn_recurrence, Stage::gdn_norm, Stage::gdn_out_proj})
    CHECK(calls(s) == deltanet);
  for (Stage s : {Stage::qkv, Stage::attention, Stage::o_proj, Stage::attn_gate}) CHECK(calls(s) == gated_attention);
  for (Stage s : {Stage::moe_router, Stage::moe_experts, Stage::moe_shared}) CHECK(calls(s) == moe);
  CHECK(calls(Stage::ffn_gate_up) == swiglu);
  CHECK(calls(Stage::lm_head) == 1);
  CHECK(to_string(Stage::gdn_recurrence) == "gdn_recurrence");
}

namespace {

/// Checks that every matrix of `m` kept `dtype` and every vector is float32; returns the bytes the
/// weights hold (the typed ones are views into the file mapping).
std::size_t check_kept(const Model& m, DType dtype) {
  std::size_t bytes = 0, matrices = 0;
  atlas::test::for_each_weight(m, [&](const std::string& name, const Weight& w, bool matrix) {
    INFO("tensor " << name);
    CHECK(to_string(w.dtype()) == std::string(to_string(matrix ? dtype : DType::f32)));
    matrices += matrix;
    bytes += w.bytes().size();
  });
  CHECK(matrices > 100);  // experts counted one by one
  return bytes;
}

/// Logits of a 70-token prefill and 3 greedy decode steps, typed vs widened, bit for bit.
void check_same_as_widened(const Model& typed) {
  std::vector<int> prompt(70);
  for (std::size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int>((i * 37 + 11) % 512);
  atlas::test::check_same_logits(typed, atlas::test::widened(typed), prompt, 4);
}

}  // namespace

TEST_CASE("qwen3-next: a bf16 Hugging Face checkpoint stays bf16 (experts one view each) and computes as its float32 widening") {
  const auto dir = atlas::test::scratch_dir("qwen3_next_bf16_typed");
  write_hf_dir(dir, reference_dir() / "config.json", DType::bf16);
  const Model m = load_1k_context(dir);
  const std::size_t held = check_kept(m, DType::bf16);
  // Nothing but the vectors is held as float32: the weights hold about the checkpoint's bytes (bf16
  // matrices) and not twice that (a float32 widening).
  const auto file = std::filesystem::file_size(dir / "model.safetensors");
  MESSAGE("weights hold " << held << " bytes for a " << file << "-byte checkpoint");
  CHECK(static_cast<double>(held) < 1.05 * static_cast<double>(file));  // a float32 widening holds ~2x
  // Experts are views into the mapped checkpoint, not a stacked copy: expert 3's down_proj is its
  // own tensor's bytes.
  const SafetensorsFile f = read_safetensors(dir / "model.safetensors");
  const auto& down3 = f.tensors.at("model.layers.1.mlp.experts.3.down_proj.weight");
  CHECK(m.weights.layers[1].moe.down_exps[3].bytes().size() == down3.data.size());
  CHECK(std::memcmp(m.weights.layers[1].moe.down_exps[3].bytes().data(), down3.data.data(), down3.data.size()) == 0);
  check_same_as_widened(m);
}

TEST_CASE("qwen3-next: bf16 and Q8_0 GGUF (fused and split GDN layouts) keep their dtype and compute as their float32 widening") {
  const auto dir = atlas::test::scratch_dir("qwen3_next_gguf_typed");
  for (DType t : {DType::bf16, DType::q8_0}) {
    for (bool split : {false, true}) {
      const std::string dtype_name = to_string(t);
      CAPTURE(dtype_name);
      CAPTURE(split);
      GgufWriteOptions w;
      w.dtype = t;
      w.qwen3next_split_qkv = split;
      const auto path = dir / (std::string(to_string(t)) + (split ? "-split" : "") + ".gguf");
      write_gguf(path, tiny(), w);
      const Model m = load_1k_context(path);
      const std::size_t held = check_kept(m, t);
      CHECK(static_cast<double>(held) < 1.05 * static_cast<double>(std::filesystem::file_size(path)));
      check_same_as_widened(m);
      if (t == DType::q8_0 && !split) {
        // Q8_0 keeps its block bytes: 34 bytes per 32 values, straight from the file.
        const GgufFile f = read_gguf(path);
        const auto info = std::find_if(f.tensors.begin(), f.tensors.end(), [](const GgufTensorInfo& i) { return i.name == "blk.0.ssm_out.weight"; });
        REQUIRE(info != f.tensors.end());
        const auto bytes = f.tensor_data(*info);
        CHECK(m.weights.layers[0].gdn.out.bytes().size() == bytes.size());
        CHECK(std::memcmp(m.weights.layers[0].gdn.out.bytes().data(), bytes.data(), bytes.size()) == 0);
        // Still HF's model: Q8_0 rounding moves the logits a little (bound as for bf16).
        const auto ref = nlohmann::json::parse(atlas::read_file(reference_dir() / "reference.json"));
        auto backend = make_backend(m, {});
        const auto& c0 = ref["cases"][2];
        const double rel = rel_l2(backend->forward(c0["prompt"].get<std::vector<int>>(), 0), base64_floats(c0["last_logits_f32_b64"].get<std::string>()));
        MESSAGE("Q8_0 GGUF vs HF fp32: logits rel L2 " << rel);
        CHECK(rel < 0.1);
      }
    }
  }
}

TEST_CASE("qwen3-next: make-model's Hugging Face writer reads back as the preset (config.json keys, tensors)") {
  const auto dir = atlas::test::scratch_dir("qwen3_next_hf_writer") / "model";
  write_qwen3_next_hf_dir(dir, tiny().config, 17, DType::f32);
  const Model m = load_1k_context(dir);
  CHECK(m.config.blocks == tiny().config.blocks);
  CHECK(m.config.rot_dim() == tiny().config.rot_dim());
  CHECK(m.config.n_experts == tiny().config.n_experts);
  CHECK(m.config.n_experts_used == tiny().config.n_experts_used);
  CHECK(m.config.shared_expert_hidden_dim == tiny().config.shared_expert_hidden_dim);
  CHECK(m.config.rope_theta == tiny().config.rope_theta);
  const Agreement a = compare_with_hf(m);
  CHECK(a.agreed == a.decided);
  CHECK_THROWS_WITH_AS(write_qwen3_next_hf_dir(dir, make_preset_model("tiny-qwen3", 1).config, 1, DType::f32), doctest::Contains("not a qwen3_next"),
                       EngineError);
}

TEST_CASE("qwen3-next: 1 and 2 CPU threads give bit-identical logits (experts split across threads at decode)") {
  std::vector<int> prompt(70);
  for (std::size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int>((i * 29 + 3) % 512);
  std::vector<std::vector<float>> runs;
  for (int threads : {1, 2}) {
    BackendOptions o;
    o.threads = threads;
    auto b = make_backend(tiny(), o);
    std::vector<float> all;
    auto l = b->forward(prompt, 0);
    all.insert(all.end(), l.begin(), l.end());
    int pos = static_cast<int>(prompt.size());
    for (int s = 0; s < 6; ++s) {
      const int tok = argmax(l);
      l = b->forward(std::span<const int>(&tok, 1), pos++);
      all.insert(all.end(), l.begin(), l.end());
    }
    runs.push_back(std::move(all));
  }
  REQUIRE(runs[0].size() == runs[1].size());
  CHECK(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * sizeof(float)) == 0);
}
