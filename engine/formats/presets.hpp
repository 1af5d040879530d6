#pragma once
// Synthetic models at real dimensions with deterministic random weights: benchmarks and tests
// of 8B-class shapes without shipping 16 GB of weights.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model.hpp"

namespace atlas::engine {

struct Preset {
  std::string name;
  ModelConfig config;
};

/// The presets, with the dimensions of the Hugging Face config.json of the model they copy:
///  - tiny-llama   (stories260K's shape: dim 64, 5 layers, 8/4 heads, vocab 512; tests)
///  - tiny-qwen3   (dim 64, 2 layers, 4/2 heads, head_dim 32 != dim/heads, vocab 512, tied)
///  - stories110m  (llama2.c stories110M: dim 768, hidden 2048, 12 layers, 12 heads, vocab 32000)
///  - qwen3-0.6b   (Qwen/Qwen3-0.6B: 1024, 3072, 28 layers, 16/8 heads, head_dim 128, tied)
///  - qwen3-8b     (Qwen/Qwen3-8B: 4096, 12288, 36 layers, 32/8 heads, head_dim 128, untied)
///  - llama-3.1-8b (meta-llama/Llama-3.1-8B: 4096, 14336, 32 layers, 32/8 heads, vocab 128256)
/// llama presets use RoPE interleaved (as a GGUF llama file), qwen3 presets RoPE half.
/// Llama-3.1's RoPE frequency scaling (rope_scaling llama3) is not modelled.
const std::vector<Preset>& presets();

/// The preset called `name`; throws EngineError listing the known names.
const Preset& find_preset(std::string_view name);

/// Builds preset `name` with weights drawn from `seed`: element i of tensor t is
/// splitmix64(seed, t, i) mapped to uniform(-a, a) with a = 1/sqrt(fan_in) for matrices
/// (fan_in = the input dimension; a = 1 for the embedding), and 1 + uniform(-0.1, 0.1) for
/// RMSNorm weights. Counter-based, so the same (name, seed) gives bit-identical weights whatever
/// the thread count; the fill runs on all hardware threads. `max_seq_len` > 0 overrides the
/// context length. The tokenizer is the byte-level one of engine/tokenizer/byte_tokenizer.hpp
/// (one id per byte, no stop ids; none when vocab_size < 259), so text-based suites run on
/// synthetic models; the weights
/// carry no language, so only token counts and timings mean anything.
Model make_preset_model(std::string_view name, std::uint64_t seed, int max_seq_len = 0);

/// The preset's config, tokenizer and source with no weight spans: for a backend that draws the
/// preset's synthetic weights itself (the CUDA backend, on the device, the same values as
/// make_preset_model's: engine/formats/synthetic_weights.hpp), so a 24 GB preset is never built
/// as float32 on the host first. Throws EngineError for an unknown preset.
Model make_preset_config_model(std::string_view name, std::uint64_t seed, int max_seq_len = 0);

/// As make_preset_model for any config (validated; EngineError naming the field otherwise).
/// source.format is "preset" and source.preset is config.name.
Model make_random_model(const ModelConfig& config, std::uint64_t seed);

}  // namespace atlas::engine
