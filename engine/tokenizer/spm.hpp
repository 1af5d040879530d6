#pragma once
// SentencePiece-style BPE (llama2.c tok*.bin, GGUF tokenizer.ggml.model "llama").
#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::engine {

struct SpmVocab {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::vector<int> types;
  int bos = 1, eos = 2, unk = 0;
  bool add_space_prefix = true;
};

std::shared_ptr<const Tokenizer> make_spm_tokenizer(SpmVocab);

}  // namespace atlas::engine
