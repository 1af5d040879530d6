#pragma once
// A byte-level tokenizer for synthetic (random-weight) models, so they run through the same
// text-based code paths (suites, server) as real ones.
#include <memory>

#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::engine {

/// Ids: 0 <unk>, 1 BOS (<s>), 2 EOS (</s>), 3 + b for byte b (the byte-fallback layout of
/// llama2.c's tok512), and the rest of `vocab_size` (>= 259) without text. encode() gives one id
/// per byte, so any text round-trips exactly; ids without text decode to nothing. stop_ids() is
/// empty and eos_id() is nullopt: random weights emit EOS by chance, and synthetic runs should
/// decode exactly the requested number of tokens (as with ignore_eos). Throws EngineError when
/// vocab_size < 259.
std::shared_ptr<const Tokenizer> make_byte_tokenizer(int vocab_size);

}  // namespace atlas::engine
