#pragma once
// The tensors of a Qwen3-Next model in both spellings: Hugging Face checkpoint names
// (Qwen/Qwen3-Next-80B-A3B layout: one tensor per expert) and llama.cpp's `qwen3next` GGUF
// names (experts stacked, norms with the +1 baked in, ssm_a = -exp(A_log)); plus the
// deterministic random weights the qwen3-next presets and the Hugging Face reference script
// (tests/engine/qwen3_next_reference/make_reference.py) both draw.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/formats/synthetic_weights.hpp"
#include "engine/model.hpp"

namespace atlas::engine {

/// How a checkpoint value becomes the value the engine holds, and how the random weights are
/// drawn (value = offset + scale * u, u uniform in [-1, 1) from 24 bits; scales are powers of two
/// so the product is exact and every implementation rounds the same way).
enum class HfInit {
  matrix,             ///< offset 0, scale 2^-floor(log2(fan_in)/2) (fan_in = last dim)
  embedding,          ///< offset 0, scale 1
  zero_centred_norm,  ///< HF Qwen3NextRMSNorm w (applied as 1 + w): offset 0, scale 1/8; engine value 1 + w
  norm,               ///< plain norm weight (gated norm): offset 1, scale 1/8
  a_log,              ///< A_log: offset -1, scale 1/2; engine value -exp(A_log)
  dt_bias,            ///< offset 1, scale 1/4
};

struct HfTensor {
  std::string hf_name;            ///< e.g. model.layers.0.linear_attn.in_proj_qkvz.weight
  std::string gguf_name;          ///< e.g. blk.0.ssm_in.weight
  std::vector<std::int64_t> shape;  ///< the HF shape (row-major)
  int expert = -1;                ///< >= 0: this HF tensor is expert `expert` of the stacked GGUF tensor
  HfInit init = HfInit::matrix;
};

/// Every tensor of a qwen3_next config, in a fixed order (embedding, layers, final norm, lm_head).
std::vector<HfTensor> qwen3_next_hf_tensors(const ModelConfig& c);

/// FNV-1a 64 of a tensor name (the per-tensor random stream key).
std::uint64_t fnv1a64(const std::string& s);
/// splitmix64 (Steele et al. 2014): the golden-gamma step, then the mix.
std::uint64_t splitmix64(std::uint64_t x);
/// Element k of HF tensor `t` for `seed`: offset + scale * u(splitmix64(splitmix64(seed ^
/// fnv1a64(hf_name)) + k)), in the HF value space (before engine transforms).
void qwen3_next_random_values(const HfTensor& t, std::uint64_t seed, float* out, std::int64_t n);
/// The same draw as a SyntheticTensor (engine/formats/synthetic_weights.hpp), with the engine
/// transform as its map.
SyntheticTensor qwen3_next_synthetic(const HfTensor& t, std::uint64_t seed);

/// The engine value of an HF checkpoint value (1 + w for zero-centred norms, -exp for A_log).
float qwen3_next_engine_value(HfInit init, float hf_value);

/// HF's grouped in_proj_qkvz rows (per key head g: [q | k | v (r heads) | z (r heads)]) from
/// llama.cpp's split layout (attn_qkv: [q of every key head | k | v of every value head], and
/// attn_gate: z of every value head), and back. Matrices row-major with `dim` columns.
void qkvz_grouped_from_split(const ModelConfig& c, const float* qkv, const float* gate, float* grouped);
void qkvz_split_from_grouped(const ModelConfig& c, const float* grouped, float* qkv, float* gate);

/// The experts of a stacked [n_experts][rows][cols] tensor as one view each (empty when
/// `stacked` is); the size must divide into whole blocks per expert.
std::vector<Weight> split_experts(const Weight& stacked, int n_experts);

/// Which split-layout row each row of HF's grouped in_proj_qkvz comes from: {from attn_gate,
/// row}, so a loader can regroup rows in the file's own dtype (any row byte size).
std::vector<std::pair<bool, int>> qkvz_grouped_sources(const ModelConfig& c);

/// A qwen3_next model with the random weights above (what make_random_model builds for it).
Model make_random_qwen3_next(const ModelConfig& config, std::uint64_t seed);

}  // namespace atlas::engine
