#pragma once
// llama2.c checkpoints (legacy headerless and "ak42" versioned) with tok*.bin tokenizers.
#include <filesystem>

#include "engine/model.hpp"

namespace atlas::engine {

Model load_llama2c(const std::filesystem::path& model, const std::filesystem::path& tokenizer, const LoadOptions&);

}  // namespace atlas::engine
