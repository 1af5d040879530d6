#pragma once
// Writes a Qwen3-Next model as a Hugging Face directory (config.json + model.safetensors, HF
// tensor names, one tensor per expert), with the deterministic random weights of the qwen3-next
// presets: what `atlas-bench make-model --format safetensors` produces, so the safetensors
// loader can be measured (peak RSS vs file size) on a checkpoint as transformers would save it.
#include <cstdint>
#include <filesystem>
#include <string>

#include "engine/formats/dtype.hpp"
#include "engine/model_config.hpp"

namespace atlas::engine {

/// Writes `dir`/config.json (model_type qwen3_next, the keys engine/formats/hf_config.cpp reads)
/// and `dir`/model.safetensors with every tensor of `c` (qwen3_next_hf_tensors) drawn by
/// qwen3_next_random_values(seed) in HF value space, stored as `dtype` (f32, f16 or bf16).
/// Creates `dir`. Throws EngineError for a config that is not qwen3_next, an unsupported dtype,
/// or an I/O failure (files are written atomically).
void write_qwen3_next_hf_dir(const std::filesystem::path& dir, const ModelConfig& c, std::uint64_t seed, DType dtype);

/// The bytes of that model.safetensors alone: every tensor of qwen3_next_hf_tensors(c), HF
/// names, values qwen3_next_random_values(seed) stored as `dtype` (what safetensors_bytes
/// accepts). With seed 17, the weights the Qwen3-Next reference script fed transformers.
std::string qwen3_next_hf_safetensors(const ModelConfig& c, std::uint64_t seed, DType dtype);

}  // namespace atlas::engine
