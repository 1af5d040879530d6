#include "engine/engine.hpp"

#include "engine/error.hpp"
#include "engine/formats/load_for_backend.hpp"

namespace atlas::engine {

Engine::~Engine() = default;

Engine Engine::from_model(Model model, const BackendOptions& backend) {
  Engine e;
  e.model_ = std::make_unique<Model>(std::move(model));
  e.backend_ = make_backend(*e.model_, backend);
  e.session_ = std::make_unique<Session>(*e.backend_);
  return e;
}

Engine Engine::open(const EngineOptions& opts) {
  if (opts.model.empty()) throw EngineError("engine: no model given (a path or \"preset:<name>[@seed]\")");
  LoadOptions load;
  load.max_seq_len = opts.max_seq_len;
  load.tokenizer_path = opts.tokenizer;
  BackendOptions backend = opts.backend;
  if (backend.max_seq_len == 0) backend.max_seq_len = opts.max_seq_len;
  return from_model(load_model_for_backend(opts.model, load, backend.name), backend);
}

const Tokenizer& Engine::tokenizer() {
  if (!model_->tokenizer) {
    // Say where the loader looked, so the fix (a file beside the model, or --tokenizer) is clear.
    const ModelSource& src = model_->source;
    // --tokenizer is honoured by llama2.c files (tok*.bin), GGUF files and safetensors directories
    // (tokenizer.json); presets have none to replace.
    std::string looked, fix;
    if (src.format == "llama2c") {
      looked = "no tokenizer.bin or tok*.bin beside " + src.path.string();
      fix = "; give one with --tokenizer FILE";
    } else if (src.format == "gguf") {
      looked = src.path.string() + " carries no tokenizer.ggml.* metadata";
      fix = "; give one with --tokenizer FILE (a tokenizer.json or a llama2.c tokenizer.bin)";
    } else if (src.format == "safetensors") {
      looked = "no tokenizer.json in " + src.path.string();
      fix = "; give one with --tokenizer FILE (a tokenizer.json)";
    } else {
      looked = "a " + src.format + " model has none of its own";
    }
    throw EngineError("engine: model '" + model_->config.name + "' has no tokenizer (" + looked + ")" + fix);
  }
  return *model_->tokenizer;
}

}  // namespace atlas::engine
