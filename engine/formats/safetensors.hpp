#pragma once
// safetensors files (Hugging Face): u64 little-endian header length N, N bytes of JSON
// {"name": {"dtype", "shape" (row-major, outermost first), "data_offsets": [begin, end)},
//  "__metadata__": {string: string}}, then the data; offsets are relative to byte 8 + N.
// Reader dtypes: F32 (used in place when 4-byte aligned), F16, BF16 (matrices used in place as
// typed weights, vectors converted to float32 at load; engine/formats/dtype.hpp). Qwen3-Next
// checkpoints are converted to float32 at load (the engine's +1 / -exp transforms and the
// stacking of per-expert tensors need a copy).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/formats/mapped_file.hpp"
#include "engine/formats/weight_builder.hpp"
#include "engine/model.hpp"

namespace atlas::engine {

struct SafetensorsFile {
  std::filesystem::path path;
  std::shared_ptr<const MappedFile> map;
  std::map<std::string, TensorView> tensors;  ///< spans into `map`
  std::map<std::string, std::string> metadata;
};

/// Parses and validates `path`: header length within the file, valid JSON, known dtypes,
/// non-negative shapes, data_offsets ordered, inside the data section and matching
/// dtype x shape, and the ranges sorted by offset tiling the data section exactly (no aliasing,
/// overlap, gap or trailing bytes; the error names the second tensor in offset order). Throws EngineError naming the file, the tensor/field and the bad value.
SafetensorsFile read_safetensors(const std::filesystem::path& path);

/// A tensor to write: float32 values stored as `dtype` (F32, F16 or BF16; rounded to nearest
/// even), `shape` row-major.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::span<const float> values;
};

/// The bytes of a safetensors file holding `tensors` in the given order (header padded with
/// spaces to a multiple of 8, as the reference writer does). Throws EngineError for an
/// unsupported dtype or a shape that does not match the number of values.
std::string safetensors_bytes(std::span<const SafetensorsTensor> tensors, const std::map<std::string, std::string>& metadata = {});

/// Loads a Hugging Face model directory: config.json (engine/formats/hf_config.hpp), weights
/// from model.safetensors or the shards named by model.safetensors.index.json ("weight_map"),
/// the tokenizer from opts.tokenizer_path (a tokenizer.json) when given, else the directory's
/// tokenizer.json when present (byte-level BPE). HF names map to the engine's:
/// model.embed_tokens, model.layers.N.{self_attn.{q,k,v,o}_proj, self_attn.{q,k}_norm,
/// input_layernorm, post_attention_layernorm, mlp.{gate,up,down}_proj}, model.norm, lm_head.
Model load_safetensors_model(const std::filesystem::path& dir, const LoadOptions& opts);

}  // namespace atlas::engine
