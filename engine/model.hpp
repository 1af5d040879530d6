#pragma once
// A loaded model: its description, its weights as float32 host spans, and the storage that owns
// them (a memory mapping of the file, or buffers of dequantized/generated values).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/formats/dtype.hpp"
#include "engine/model_config.hpp"

namespace atlas::engine {

/// A weight tensor as the engine holds it: float32 values, or the file's own bf16 / f16 / Q8_0
/// bytes (typed, mmap-backed: loading such a file does not copy its matrices). It reads like a
/// std::span<const float> for float32 tensors (data(), iteration, conversion to a span); for a
/// typed tensor those throw EngineError, and callers use operator[], to_f32() or the CPU
/// matmul, which reads bf16 / f16 directly and Q8_0 a block of rows at a time.
class Weight {
 public:
  Weight() = default;
  Weight(std::span<const float> v) noexcept  // NOLINT: implicit, a float span is a float32 weight
      : dtype_(DType::f32), bytes_(std::as_bytes(v)), n_(v.size()) {}
  Weight(std::span<float> v) noexcept : Weight(std::span<const float>(v)) {}  // NOLINT
  /// `n` elements stored as `t` in `bytes` (exactly storage_bytes(t, n); Q8_0: n a multiple of 32).
  static Weight stored(DType t, std::span<const std::byte> bytes, std::size_t n);

  DType dtype() const { return dtype_; }
  bool is_f32() const { return dtype_ == DType::f32; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  std::span<const std::byte> bytes() const { return bytes_; }
  /// Float32 only (EngineError naming the dtype otherwise).
  const float* data() const;
  const float* begin() const { return data(); }
  const float* end() const { return data() + n_; }
  operator std::span<const float>() const { return {data(), n_}; }  // NOLINT: float32 only
  std::span<const float> first(std::size_t n) const { return std::span<const float>(*this).first(n); }
  /// Element i as float32, whatever the storage.
  float operator[](std::size_t i) const;
  float back() const { return (*this)[n_ - 1]; }
  /// Elements [off, off + n) as a Weight of the same storage (off and n whole blocks: multiples
  /// of 32 for Q8_0; EngineError otherwise).
  Weight subspan(std::size_t off, std::size_t n) const;
  /// Elements [off, off + n) converted to float32 into out (any off and n).
  void to_f32(std::size_t off, std::size_t n, float* out) const;
  /// Bytes of one row of `cols` elements (cols a whole number of blocks).
  std::size_t row_bytes(std::size_t cols) const;

 private:
  DType dtype_ = DType::f32;
  std::span<const std::byte> bytes_;
  std::size_t n_ = 0;
};

/// Weights of a gated_deltanet mixer, in the Hugging Face checkpoint layout (which llama.cpp's
/// qwen3next GGUF keeps for ssm_in / ssm_beta_alpha). Matrices are row-major [out][in].
struct DeltaNetWeights {
  /// [qkvz_dim][dim]: rows grouped by key head g: [q (k_head_dim) | k (k_head_dim) |
  /// v (r*v_head_dim) | z (r*v_head_dim)], r = v_heads / k_heads (HF in_proj_qkvz).
  Weight in_qkvz;
  /// [2*v_heads][dim]: rows grouped by key head: [b (r) | a (r)] (HF in_proj_ba).
  Weight in_ba;
  Weight conv1d;   ///< [conv_dim][conv_kernel], channels [q | k | v] (depthwise, no bias)
  Weight dt_bias;  ///< [v_heads]
  Weight a;        ///< [v_heads] = -exp(A_log) (as llama.cpp's ssm_a stores it)
  Weight norm;     ///< [v_head_dim] gated RMSNorm weight (plain, not zero-centred)
  Weight out;      ///< [dim][value_dim]
};

/// Weights of a moe ffn. One Weight per expert: a view of its slice of a stacked GGUF tensor, or
/// of its own tensor in a Hugging Face checkpoint (per-expert or transformers 5's fused
/// gate_up_proj), so experts stay in the file's dtype wherever the file keeps them.
struct MoeWeights {
  Weight router;                   ///< [n_experts][dim]
  std::vector<Weight> gate_exps;   ///< [n_experts] x [expert_hidden][dim]
  std::vector<Weight> up_exps;     ///< [n_experts] x [expert_hidden][dim]
  std::vector<Weight> down_exps;   ///< [n_experts] x [dim][expert_hidden]
  Weight shared_gate;  ///< [dim] sigmoid gate of the shared expert (1 output)
  Weight gate_shexp;   ///< [shared_hidden][dim]; all four empty without a shared expert
  Weight up_shexp;     ///< [shared_hidden][dim]
  Weight down_shexp;   ///< [dim][shared_hidden]
};

/// Weights of one block; which members are set depends on ModelConfig::block(l). Matrices are
/// row-major [out][in] (y = W x). RMSNorm weights are the multiplier applied (a zero-centred
/// checkpoint norm w is stored as 1 + w, as llama.cpp's GGUF does).
struct LayerWeights {
  Weight attn_norm;  ///< [dim] (the mixer's input norm)
  // attention / gated_attention
  Weight wq;         ///< [q_dim][dim]; gated_attention: [2*q_dim][dim], per head [query | gate]
  Weight wk;         ///< [kv_dim][dim]
  Weight wv;         ///< [kv_dim][dim]
  Weight wo;         ///< [dim][q_dim]
  Weight q_norm;     ///< [head_dim], empty unless config.qk_norm
  Weight k_norm;     ///< [head_dim], empty unless config.qk_norm
  DeltaNetWeights gdn;               ///< gated_deltanet
  Weight ffn_norm;   ///< [dim] (the ffn's input norm; HF post_attention_layernorm)
  // swiglu
  Weight w_gate;     ///< [hidden_dim][dim]  (llama2.c w1)
  Weight w_up;       ///< [hidden_dim][dim]  (llama2.c w3)
  Weight w_down;     ///< [dim][hidden_dim]  (llama2.c w2)
  MoeWeights moe;                    ///< moe
};

struct ModelWeights {
  Weight tok_embd;     ///< [vocab][dim]
  std::vector<LayerWeights> layers;    ///< [n_layers]
  Weight output_norm;  ///< [dim]
  Weight output;       ///< [vocab][dim]; aliases tok_embd when tied
};

/// Where a model came from (for record provenance).
struct ModelSource {
  std::filesystem::path path;   ///< file or directory; empty for in-memory presets
  std::string format;           ///< "gguf" | "llama2c" | "safetensors" | "preset"
  std::string preset;           ///< preset name when format == "preset"
  std::uint64_t seed = 0;       ///< preset seed
  std::map<std::string, std::string> metadata;  ///< selected key/values (e.g. GGUF general.*)
};

class Tokenizer;

/// Move-only owner of everything a backend needs. The spans in `weights` point into `storage_`.
class Model {
 public:
  ModelConfig config;
  ModelWeights weights;
  ModelSource source;
  std::shared_ptr<const Tokenizer> tokenizer;  ///< null for models without one (synthetic presets)

  Model() = default;
  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  /// Keeps a buffer alive for the model's lifetime and returns a span over it.
  std::span<const float> own(std::vector<float> values);
  /// Keeps any RAII object (e.g. a file mapping) alive for the model's lifetime.
  void keep_alive(std::shared_ptr<const void> resource) { resources_.push_back(std::move(resource)); }

 private:
  std::vector<std::unique_ptr<std::vector<float>>> storage_;
  std::vector<std::shared_ptr<const void>> resources_;
};

struct LoadOptions {
  int max_seq_len = 0;            ///< 0: the model's own context length
  /// llama2.c: tok*.bin; safetensors directory: a tokenizer.json; empty = look beside the model.
  /// GGUF: replaces the file's own tokenizer (a tokenizer.json, else a llama2.c tokenizer file).
  std::filesystem::path tokenizer_path;
};

/// Loads a model, detecting the format: a directory with config.json (safetensors), a file
/// starting with "GGUF" (GGUF v2/v3), otherwise a llama2.c checkpoint (legacy or "ak42").
/// Throws EngineError naming the file, the field and the bad value.
Model load_model(const std::filesystem::path& path, const LoadOptions& opts = {});

}  // namespace atlas::engine
