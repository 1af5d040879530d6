#pragma once
// A small facade over model loading, backend creation and a generation session, for suites,
// tools and tests: Engine::open({.model = "path/or/preset:name@seed"}).
#include <filesystem>
#include <memory>
#include <string>

#include "engine/backend.hpp"
#include "engine/model.hpp"
#include "engine/session.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::engine {

struct EngineOptions {
  std::string model;                ///< a model path, or "preset:<name>[@seed]"
  std::filesystem::path tokenizer;  ///< llama2.c tokenizer file; empty = beside the model
  BackendOptions backend;           ///< taken as given (apply backend_options_from_env first if wanted)
  int max_seq_len = 0;              ///< 0: the model's own context length
};

/// Owns a model, one backend over it and one session over the backend. Move-only; the parts
/// live on the heap so references handed out stay valid across moves.
class Engine {
 public:
  /// Loads the model with load_model() and creates the backend. Throws EngineError (bad file,
  /// unknown backend, ...).
  static Engine open(const EngineOptions& opts);

  Engine(Engine&&) noexcept = default;
  Engine& operator=(Engine&&) noexcept = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  ~Engine();

  Model& model() { return *model_; }
  /// Throws EngineError when the model has no tokenizer (synthetic presets).
  const Tokenizer& tokenizer();
  Backend& backend() { return *backend_; }
  Session& session() { return *session_; }

  /// Wraps an already loaded model (tests, benchmarks).
  static Engine from_model(Model model, const BackendOptions& backend);

 private:
  Engine() = default;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Session> session_;
};

}  // namespace atlas::engine
