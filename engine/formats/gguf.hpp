#pragma once
// GGUF v2/v3 reader (llama.cpp's model file format, docs/gguf.md in ggml).
//
// Layout: magic "GGUF", u32 version, u64 tensor_count, u64 metadata_kv_count, the key/values,
// the tensor infos (name, u32 n_dims, i64 ne[n_dims] with ne0 the fastest-varying i.e. input
// dimension first, u32 ggml type, u64 offset relative to the data section), padding to
// general.alignment (default 32), then the tensor data. All little-endian.
//
// Every count, length and offset is checked against the file size before it is used; errors
// are EngineError naming the file, the field or tensor, and the bad value.
//
// Tensor types: F32, and BF16 / F16 matrices, are used in place from the mapping (typed
// weights); other BF16 / F16 tensors and Q8_0 are converted to float32 once at load into a
// Model-owned buffer (engine/formats/dtype.hpp). Other ggml types are rejected by name.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "engine/formats/dtype.hpp"
#include "engine/formats/mapped_file.hpp"
#include "engine/model.hpp"

namespace atlas::engine {

/// GGUF metadata value types (gguf_type).
enum class GgufType : std::uint32_t {
  uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6, boolean = 7,
  string = 8, array = 9, uint64 = 10, int64 = 11, float64 = 12,
};
const char* to_string(GgufType t);

/// ggml tensor type ids we read (ggml_type).
inline constexpr std::uint32_t kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ8_0 = 8, kGgmlBF16 = 30;

struct GgufValue {
  struct Array {
    GgufType elem_type = GgufType::uint8;
    std::vector<GgufValue> items;
  };
  GgufType type = GgufType::uint8;
  /// uint* -> uint64_t, int* -> int64_t, float* -> double, bool, string, array.
  std::variant<std::uint64_t, std::int64_t, double, bool, std::string, Array> value;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<std::int64_t> ne;  ///< ne0 first (GGUF order)
  std::uint32_t ggml_type = 0;
  DType dtype = DType::f32;
  std::uint64_t offset = 0;      ///< relative to the data section
  std::uint64_t nbytes = 0;
};

struct GgufFile {
  std::filesystem::path path;
  std::uint32_t version = 0;
  std::uint64_t alignment = 32;
  std::uint64_t data_offset = 0;  ///< absolute file offset of the data section
  std::map<std::string, GgufValue> metadata;
  std::vector<GgufTensorInfo> tensors;
  std::shared_ptr<const MappedFile> map;

  const GgufValue* find(const std::string& key) const;
  /// Typed getters; throw EngineError naming the file, the key and the stored type/value.
  std::uint64_t get_uint(const std::string& key) const;  ///< any integer type, >= 0
  double get_float(const std::string& key) const;        ///< float32/float64 (or an integer)
  std::string get_string(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  const GgufValue::Array& get_array(const std::string& key) const;
  /// The bytes of a tensor (validated at read time to lie inside the file).
  std::span<const std::byte> tensor_data(const GgufTensorInfo& t) const;
};

/// Parses the header, metadata and tensor infos of `path` (mapping the file).
GgufFile read_gguf(const std::filesystem::path& path);

/// Loads a GGUF model: general.architecture "llama" (RoPE interleaved) or "qwen3" (RoPE half,
/// q/k norms). Config from `<arch>.embedding_length`, `.feed_forward_length`, `.block_count`,
/// `.attention.head_count`, `.attention.head_count_kv` (default head_count),
/// `.attention.key_length` (default dim / heads), `.attention.layer_norm_rms_epsilon`
/// (default 1e-5), `.rope.freq_base` (default 10000), `.context_length`; vocab from the rows of
/// token_embd. Tokenizer: tokenizer.ggml.model "llama" (SentencePiece; U+2581 in pieces becomes
/// a space, as in llama2.c tok*.bin) or "gpt2" (byte-level BPE, split regex from
/// tokenizer.ggml.pre); absent: the byte-level tokenizer for files make-model wrote (key
/// atlas.preset), else none.
Model load_gguf(const std::filesystem::path& path, const LoadOptions& opts);

}  // namespace atlas::engine
