#pragma once
// GGUF v3 writer for models the engine holds (synthetic presets, test fixtures): the metadata
// load_gguf reads, and every weight tensor in one storage type. Output is a pure function of
// the model and options: the same model gives byte-identical files.
#include <cstdint>
#include <filesystem>
#include <optional>

#include "engine/formats/dtype.hpp"
#include "engine/model.hpp"
#include "engine/tokenizer/bpe.hpp"

namespace atlas::engine {

struct GgufWriteOptions {
  DType dtype = DType::f32;  ///< storage of the matrices; RMSNorm weights always stay F32
  std::uint64_t alignment = 32;
  /// A byte-level BPE vocabulary to embed (tokenizer.ggml.model "gpt2", tokenizer.ggml.pre
  /// "gpt-2" / "llama-bpe" / "qwen2": llama.cpp's names), e.g. from read_tokenizer_json or
  /// synthetic_bpe_vocab (make-model's default). Its ids must be below the model's vocab_size; the token list is
  /// padded to vocab_size with "[PAD<id>]" entries of type 5 (unused), as llama.cpp's converter does.
  std::optional<BpeVocab> tokenizer;
  /// qwen3next: write llama.cpp's current split layout (blk.N.attn_qkv [q | k | v] +
  /// blk.N.attn_gate [z]) instead of the legacy fused, per-key-head grouped ssm_in.
  bool qwen3next_split_qkv = false;
};

/// Writes `model` as GGUF v3: general.architecture/name/alignment, `<arch>.context_length`,
/// embedding_length, feed_forward_length, block_count, attention.head_count,
/// head_count_kv, key_length, value_length, layer_norm_rms_epsilon, rope.freq_base,
/// rope.dimension_count (the rotated dims), for presets atlas.preset / atlas.seed, and without a
/// tokenizer tokenizer.ggml.model = "none" (llama.cpp's vocabulary-less marker). qwen3next models
/// (Qwen3-Next) follow llama.cpp's layout: ssm.* / expert_* / full_attention_interval keys, the
/// legacy fused ssm_in, stacked *_exps experts, norms with the +1 baked in, ssm_a = -exp(A_log).
/// Tensors use GGUF names and
/// ne0-first shapes; output.weight is omitted when the embedding is tied. A tokenizer is
/// written only from opts.tokenizer (a Tokenizer object cannot be serialized generically). Q8_0 needs every
/// row length to be a multiple of 32 (EngineError otherwise). The file is written to a
/// temporary beside `out` and renamed, so a reader never sees a partial file. Throws
/// EngineError naming the path on I/O failure.
void write_gguf(const std::filesystem::path& out, const Model& model, const GgufWriteOptions& opts = {});

/// Q8_0 quantization of one block of 32 values (ggml's quantize_row_q8_0_ref: d = amax / 127,
/// q = round(x / d)); writes 34 bytes.
void quantize_q8_0_block(const float* x, std::byte* out);

}  // namespace atlas::engine
