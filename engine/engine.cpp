#include "engine/engine.hpp"

#include "engine/error.hpp"

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
  return from_model(load_model(opts.model, load), backend);
}

const Tokenizer& Engine::tokenizer() {
  if (!model_->tokenizer) throw EngineError("engine: model '" + model_->config.name + "' has no tokenizer");
  return *model_->tokenizer;
}

}  // namespace atlas::engine
