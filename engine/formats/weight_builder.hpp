#pragma once
// Turns a format's tensor table into Model::weights: checks every tensor's shape against the
// ModelConfig and its byte size against the data it points to, uses aligned F32 tensors and
// BF16 / F16 / Q8_0 matrices in place (typed Weights over the file mapping) and converts everything else
// (vectors, the conv kernel) to float32 into one buffer the Model owns.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "engine/formats/dtype.hpp"
#include "engine/model.hpp"

namespace atlas::engine {

/// One stored tensor. `shape` is row-major, outermost first: a matrix y = W x is [out][in]
/// (GGUF readers reverse their ne0-first lists; safetensors shapes are already this way).
struct TensorView {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> data;  ///< exactly storage_bytes(dtype, elements) bytes (empty when `parts` is set)
  /// A stacked expert tensor [n_experts][rows][cols] held as one span per expert (Hugging Face
  /// checkpoints store experts apart): storage_bytes(dtype, elements / n_experts) bytes each.
  std::vector<std::span<const std::byte>> parts;

  std::int64_t elements() const;
};

/// Tensors keyed by GGUF names ("token_embd.weight", "blk.3.attn_q.weight", ...).
using TensorTable = std::map<std::string, TensorView>;

/// Fills model.weights from `tensors` for model.config (arch, dims, qk_norm). A missing
/// "output.weight" means the classifier is tied: weights.output aliases tok_embd and
/// config.tied_embeddings becomes true. Throws EngineError naming `file`, the tensor and the bad
/// shape/size/dtype (spelled as the file spells it: `file_name` maps a GGUF name to the file's
/// own name; identity when empty). Conversion of non-F32 tensors runs on all hardware threads.
/// Returns the names of tensors in `tensors` the model does not use (e.g. llama.cpp's
/// rope_freqs.weight), for provenance.
std::vector<std::string> assemble_weights(Model& model, const TensorTable& tensors, const std::filesystem::path& file,
                      const std::function<std::string(const std::string&)>& file_name = {});

/// Checks a config read from a file: positive dims, n_heads % n_kv_heads == 0, even head_dim.
/// Throws EngineError naming `file`, the field and the value.
void validate_config(const ModelConfig& c, const std::filesystem::path& file);

/// Converts spans of stored elements to float32 in parallel (chunks of whole blocks).
struct ConvertJob {
  DType dtype;
  std::span<const std::byte> src;
  std::span<float> dst;
};
void run_convert_jobs(std::span<const ConvertJob> jobs);

}  // namespace atlas::engine
