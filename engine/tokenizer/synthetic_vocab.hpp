#pragma once
// A byte-level BPE vocabulary for synthetic models (make-model presets), so their GGUF files
// carry a tokenizer every GGUF reader accepts by default: llama.cpp's "gpt2" model with the
// "gpt-2" pre-tokenizer (its names; it aborts generating from a file without a vocabulary and
// refuses the pre-tokenizer name "gpt2"), tokens, token types and merges.
//
// Every token decodes to valid UTF-8 on its own: the pieces are ASCII only (GPT-2's
// byte-to-unicode alphabet of the printable ASCII bytes, '\n' and '\t'), so a model with random
// weights, which may emit any id in any order, never makes a server stream an invalid or
// incomplete character (llama-server answered 500 or held text back). Bytes >= 0x80 have no
// token: text outside ASCII encodes to nothing (byte-level vocabularies usually cover all 256
// bytes; a synthetic model needs none of them).
//
// Layout for vocab_size V (V >= kMinSyntheticVocab):
//   id 0           "<|endoftext|>" (control): BOS and EOS
//   ids 1..97      the 95 printable ASCII characters, '\n' ("Ċ") and '\t' ("ĉ")
//   ids 98..V-1    merged pieces, each the merge of two earlier tokens ("Ġ" or a letter, then
//                  letters): "Ġa".."zz", then those plus a letter, ... in a fixed order
// The merges list each merged piece's two parts in id order (rank = id - 98). Deterministic:
// the same V gives the same vocabulary.
#include "engine/tokenizer/bpe.hpp"

namespace atlas::engine {

/// The smallest vocabulary synthetic_bpe_vocab builds: <|endoftext|> and the 97 characters.
inline constexpr int kMinSyntheticVocab = 98;

/// The vocabulary above. Throws EngineError when vocab_size < kMinSyntheticVocab.
BpeVocab synthetic_bpe_vocab(int vocab_size);

}  // namespace atlas::engine
