#pragma once
// SentencePiece-style BPE with scores and byte fallback: the tokenizer of llama2.c (tok*.bin)
// and of GGUF files with tokenizer.ggml.model = "llama".
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::engine {

/// GGUF token types (llama.cpp llama_token_type).
enum class SpmTokenType : int { normal = 1, unknown = 2, control = 3, user_defined = 4, unused = 5, byte = 6 };

/// The vocabulary of a SentencePiece BPE model.
struct SpmVocab {
  std::vector<std::string> pieces;  ///< [vocab]; the word marker may be U+2581 or a plain space
  std::vector<float> scores;        ///< [vocab] merge priorities (higher merges first)
  std::vector<int> types;           ///< [vocab] GGUF token types; may be empty (llama2.c)
  int bos = 1, eos = 2, unk = 0;
  bool add_space_prefix = true;     ///< prepend the " " dummy prefix to non-empty text
};

/// Builds the tokenizer. Encoding follows llama2.c run.c `encode()` exactly: BOS, the dummy
/// prefix " " when the text is non-empty, each UTF-8 code point looked up as a piece (byte
/// fallback to "<0xHH>" pieces, else unk), then repeatedly the adjacent pair whose concatenation
/// is a piece with the highest score is merged (the leftmost pair on a tie).
/// Decoding: the piece after BOS loses its leading space; "<0xHH>" gives the raw byte; control
/// tokens (BOS/EOS, GGUF type 3) give nothing.
/// stop_ids() is {eos}. Throws EngineError when pieces and scores differ in size, ids are out
/// of range, or a BYTE-typed token's text is not "<0xHH>".
std::shared_ptr<const Tokenizer> make_spm_tokenizer(SpmVocab vocab);

/// Reads a llama2.c tokenizer file (tok512.bin, tokenizer.bin): int32 max_token_length, then
/// per token float32 score, int32 byte length, raw bytes. bos 1, eos 2, unk 0. Generation of
/// llama2.c models stops on BOS (run.c), so stop_ids() is {bos, eos}.
/// Throws EngineError naming the file, the field and the bad value.
std::shared_ptr<const Tokenizer> load_llama2c_tokenizer(const std::filesystem::path& tok_bin, int vocab_size);

}  // namespace atlas::engine
