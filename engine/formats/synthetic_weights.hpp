#pragma once
// The synthetic weights of a preset, tensor by tensor: how each value is drawn, so that a backend
// can generate on its own (the CUDA backend on the device, where a 24 GB preset has no host copy)
// exactly the values make-model writes on the host for that preset and seed.
//
// Value k of a tensor (row-major, in the file's value space) is
//   offset + scale * u_k,  u_k = ((splitmix64(stream + k) >> 40) - 2^23) / 2^23, in [-1, 1),
// the product rounded to float32 before the sum (no fused multiply-add), so every implementation
// gives the same bits; the engine then holds map(value) (1 + w for Qwen3-Next's zero-centred
// norms, -exp(w) for A_log). tests/engine/synthetic_weights_test.cpp holds this table to
// make_random_model bit for bit.
#include <cstdint>
#include <map>
#include <string>

#include "engine/model.hpp"

namespace atlas::engine {

struct SyntheticTensor {
  enum class Map { none, one_plus, neg_exp };
  std::uint64_t stream = 0;  ///< the per-tensor key
  float scale = 1.0f;
  float offset = 0.0f;
  Map map = Map::none;
  std::int64_t values = 0;  ///< element count
};

/// Every tensor of `config`'s synthetic weights for `seed`, keyed by the engine's tensor names:
/// "token_embd", "output_norm", "output" (untied only), "blk.<l>.<name>" with the llama.cpp
/// short names (attn_norm, attn_q, attn_k, attn_v, attn_output, attn_q_norm, attn_k_norm,
/// ffn_norm, ffn_gate, ffn_up, ffn_down; Qwen3-Next: ssm_in, ssm_ba, ssm_conv1d, ssm_dt.bias,
/// ssm_a, ssm_norm, ssm_out, ffn_gate_inp, ffn_gate_inp_shexp, ffn_{gate,up,down}_shexp, and
/// ffn_{gate,up,down}_exps[<e>] per expert). Dense presets: the streams of make_random_model's
/// fill order, scale 1/sqrt(fan_in) (norms 1 +- 0.1); Qwen3-Next: qwen3_next_tensors.hpp's.
std::map<std::string, SyntheticTensor> synthetic_tensors(const ModelConfig& config, std::uint64_t seed);

/// Value `k` of `t` in the file's value space (before `map`).
float synthetic_value(const SyntheticTensor& t, std::int64_t k);

/// Values [first, first + n) of `t` as the engine holds them (after `map`) into out[0, n).
void synthetic_engine_values(const SyntheticTensor& t, std::int64_t first, std::int64_t n, float* out);

}  // namespace atlas::engine
