#pragma once
// Typed weights (bf16 / f16 / Q8_0 kept as the file stores them) against their float32 widening:
// the walk over a model's weights, the widened model, and the bit-for-bit logits check the
// loader tests share (tests/formats/model_roundtrip_test.cpp, tests/engine/qwen3_next_test.cpp).
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend.hpp"
#include "engine/cpu/matmul.hpp"
#include "engine/model.hpp"
#include "engine/sampler.hpp"

namespace atlas::test {

/// Every weight of a model with its GGUF-style name and whether the engine multiplies by it as a
/// matrix (or reads embedding rows): those must keep the checkpoint's dtype. `M` is Model or
/// const Model; `f(name, weight, is_matrix)`.
template <class M, class F>
void for_each_weight(M& m, F f) {
  f(std::string("token_embd"), m.weights.tok_embd, true);
  f(std::string("output_norm"), m.weights.output_norm, false);
  f(std::string("output"), m.weights.output, true);
  for (std::size_t l = 0; l < m.weights.layers.size(); ++l) {
    auto& L = m.weights.layers[l];
    const std::string p = "blk." + std::to_string(l) + ".";
    for (auto [n, w] : {std::pair{"attn_q", &L.wq}, {"attn_k", &L.wk}, {"attn_v", &L.wv}, {"attn_output", &L.wo}, {"ssm_in", &L.gdn.in_qkvz},
                        {"ssm_ba", &L.gdn.in_ba}, {"ssm_out", &L.gdn.out}, {"ffn_gate", &L.w_gate}, {"ffn_up", &L.w_up}, {"ffn_down", &L.w_down},
                        {"ffn_gate_inp", &L.moe.router}, {"ffn_gate_shexp", &L.moe.gate_shexp}, {"ffn_up_shexp", &L.moe.up_shexp},
                        {"ffn_down_shexp", &L.moe.down_shexp}})
      if (!w->empty()) f(p + n, *w, true);
    for (auto [n, w] : {std::pair{"attn_norm", &L.attn_norm}, {"ffn_norm", &L.ffn_norm}, {"attn_q_norm", &L.q_norm}, {"attn_k_norm", &L.k_norm},
                        {"ssm_conv1d", &L.gdn.conv1d}, {"ssm_dt", &L.gdn.dt_bias}, {"ssm_a", &L.gdn.a}, {"ssm_norm", &L.gdn.norm},
                        {"ffn_gate_inp_shexp", &L.moe.shared_gate}})
      if (!w->empty()) f(p + n, *w, false);
    for (auto [n, list] : {std::pair{"ffn_gate_exps", &L.moe.gate_exps}, {"ffn_up_exps", &L.moe.up_exps}, {"ffn_down_exps", &L.moe.down_exps}})
      for (std::size_t e = 0; e < list->size(); ++e) f(p + n + "[" + std::to_string(e) + "]", (*list)[e], true);
  }
}

/// The same model with every typed weight widened to float32 up front (what the loaders did
/// before typed weights).
inline engine::Model widened(const engine::Model& typed) {
  engine::Model wide;
  wide.config = typed.config;
  wide.weights = typed.weights;
  for_each_weight(wide, [&](const std::string&, engine::Weight& x, bool) {
    if (x.is_f32()) return;
    std::vector<float> v(x.size());
    x.to_f32(0, x.size(), v.data());
    x = wide.own(std::move(v));
  });
  if (typed.config.tied_embeddings) wide.weights.output = wide.weights.tok_embd;
  return wide;
}

/// Checks that `a` and `b` give bit-identical logits on the CPU backend (2 threads), with the AVX2
/// matmul kernels (where the CPU has them) and with the portable ones: a prefill of `prompt`, then
/// `steps - 1` greedy decode steps on `a`'s tokens. Leaves the AVX2 kernels selected.
inline void check_same_logits(const engine::Model& a, const engine::Model& b, const std::vector<int>& prompt, int steps) {
  for (bool avx2 : {true, false}) {
    CAPTURE(avx2);
    if (!engine::cpu::set_matmul_avx2(avx2) && avx2) continue;
    engine::BackendOptions o;
    o.threads = 2;
    auto ba = engine::make_backend(a, o);
    auto bb = engine::make_backend(b, o);
    std::vector<int> tokens = prompt;
    int pos = 0;
    for (int step = 0; step < steps; ++step) {
      CAPTURE(step);
      const auto la = ba->forward(tokens, pos);
      const std::vector<float> first(la.begin(), la.end());
      const auto lb = bb->forward(tokens, pos);
      REQUIRE(first.size() == lb.size());
      CHECK(std::memcmp(first.data(), lb.data(), first.size() * sizeof(float)) == 0);
      pos += static_cast<int>(tokens.size());
      tokens = {engine::argmax(first)};
    }
  }
  engine::cpu::set_matmul_avx2(true);
}

}  // namespace atlas::test
