#pragma once
// llama2.c checkpoints (github.com/karpathy/llama2.c, export.py / run.c):
// - legacy (version 0): 7 int32 header {dim, hidden_dim, n_layers, n_heads, n_kv_heads,
//   vocab_size, seq_len} (vocab_size < 0 means an untied classifier), then float32 arrays
//   token_embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final, two unused RoPE
//   tables [seq_len][head_size/2], and wcls when untied.
// - "ak42" versioned: uint32 magic 0x616b3432, int32 version, the 7 int32 fields, uint8
//   shared_classifier, (version 2: int32 group_size), zero padding to byte 256. Version 1 stores
//   float32 rms_att, rms_ffn, rms_final, token_embedding, wq, wk, wv, wo, w1, w2, w3 [, wcls].
//   Version 2 stores the norms as float32, then each matrix (token_embedding, wq, wk, wv, wo,
//   w1, w2, w3 [, wcls]) as int8 values followed by float32 scales, one per group_size values
//   (Q8_0: w = q * scale); it is dequantized to float32 on load.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "engine/model.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::engine {

/// Loads a llama2.c checkpoint and its tokenizer. `tokenizer` empty: LoadOptions::tokenizer_path,
/// else tokenizer.bin or tok<vocab>.bin beside the model, else no tokenizer (raw ids only).
/// The model is Arch::llama with RopeLayout::interleaved, theta 10000, RMSNorm eps 1e-5.
/// Throws EngineError naming the file, the field and the bad value: a short or oversized file,
/// a non-positive or inconsistent header field, an unknown version, a bad group size.
Model load_llama2c(const std::filesystem::path& model, const std::filesystem::path& tokenizer = {},
                   const LoadOptions& opts = {});

/// Bytes a legacy (headerless-magic) llama2.c checkpoint with this file's first 28 bytes must
/// have, when those bytes parse as a plausible header; nothing otherwise. Lets a loader tell a
/// truncated checkpoint from a file of another kind.
std::optional<std::uintmax_t> llama2c_legacy_expected_size(const std::filesystem::path& model);

/// True when the file starts like a llama2.c checkpoint we can parse (the ak42 magic, or a
/// plausible legacy header whose implied size equals the file size).
bool looks_like_llama2c(const std::filesystem::path& model);

/// Why the first 28 bytes of `model` are not a valid legacy llama2.c header ("header field dim =
/// 0 is invalid (must be in [1, 65536])"), or nullopt when they are (or the file is shorter).
/// For the error of a file no loader recognises: a legacy header has no magic to identify it.
std::optional<std::string> llama2c_legacy_header_problem(const std::filesystem::path& model);

}  // namespace atlas::engine
