#pragma once
// Loading a model for the backend that will run it: the one difference from load_model is a
// preset on the CUDA backend, which comes back without weight spans (make_preset_config_model)
// because that backend generates the preset's weights on the device, the same values
// make_preset_model builds on the host (engine/formats/synthetic_weights.hpp); a 24 GB preset is
// then never built as float32 host arrays first.
#include <filesystem>
#include <string_view>

#include "engine/model.hpp"

namespace atlas::engine {

/// load_model(path, opts), except "preset:..." with backend "cuda": config, tokenizer and
/// source only. Throws EngineError as load_model does.
Model load_model_for_backend(const std::filesystem::path& path, const LoadOptions& opts, std::string_view backend);

}  // namespace atlas::engine
