// Hugging Face config.json (engine/formats/hf_config.hpp), the first file the engine reads from a
// safetensors model directory: architecture, dims, defaults, rope_parameters, the Qwen3-Next
// fields (layer_types, experts, mlp_only_layers); then validate_config as load_safetensors_model
// runs it. A config that is accepted must describe a model the engine can size.
#include "engine/error.hpp"
#include "engine/formats/hf_config.hpp"
#include "engine/formats/weight_builder.hpp"
#include "fuzz/fuzz_target.hpp"

ATLAS_FUZZ_TARGET(hf_config) {
  using namespace atlas;
  const auto path = fuzz::scratch_file("config.json", data, size);
  try {
    const engine::HfConfig hf = engine::read_hf_config(path);
    const engine::ModelConfig& c = hf.config;
    engine::validate_config(c, path);
    fuzz::check(c.dim > 0 && c.n_layers > 0 && c.n_heads > 0 && c.n_kv_heads > 0 && c.head_dim > 0 && c.vocab_size > 0,
                "an accepted config has positive dims");
    if (c.arch == engine::Arch::qwen3_next)
      fuzz::check(c.blocks.size() == static_cast<std::size_t>(c.n_layers), "one block per layer");
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
  }
  return 0;
}
