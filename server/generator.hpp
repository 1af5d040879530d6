#pragma once
// What the server decodes with: one model behind one KV cache. The server calls it from one
// thread at a time (the decode queue serialises requests), so implementations need no locking.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/backend.hpp"
#include "engine/model.hpp"
#include "engine/session.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace atlas::server {

class Generator {
 public:
  virtual ~Generator() = default;
  virtual const engine::Tokenizer& tokenizer() const = 0;
  /// Tokens the KV cache holds (prompt + generated must fit).
  virtual int context_length() const = 0;
  /// engine::Session::generate semantics (prefix reuse, stop ids, per-token callback). Throws
  /// engine::EngineError for a prompt that does not fit. When `on_token` throws (the client
  /// went away, a stop string matched), the exception propagates and cached_tokens() still
  /// describes the cache exactly (Session keeps only tokens whose K/V were written).
  virtual engine::GenerateResult generate(const engine::GenerateRequest& req,
                                          const std::function<void(const engine::TokenEvent&)>& on_token) = 0;
  /// Whether generate() computes GenerateRequest::logprobs (the backend's
  /// engine::Backend::supports_logprobs); the server answers 400 naming backend_name() otherwise.
  virtual bool supports_logprobs() const { return false; }
  /// The backend decoding ("cpu", "cuda"), for messages.
  virtual std::string backend_name() const { return "unknown"; }
  /// Forgets the cached prefix.
  virtual void reset() = 0;
  /// Tokens whose K/V the cache holds, in order (prefix reuse: a new prompt sharing a prefix
  /// with them prefills only the rest).
  virtual const std::vector<int>& cached_tokens() const = 0;
  /// The chat template the model ships (GGUF tokenizer.chat_template, HF tokenizer_config.json),
  /// or "" for none.
  virtual std::string chat_template() const { return {}; }
  /// Model and backend provenance for GET /v1/models.
  virtual nlohmann::json describe() const { return nlohmann::json::object(); }
};

struct GeneratorOptions {
  std::filesystem::path model;     ///< model file or directory (engine::load_model formats)
  std::filesystem::path tokenizer; ///< llama2.c tok*.bin; empty = beside the model
  std::string backend = "cpu";     ///< "cpu" | "cuda" (ATLAS_* backend variables apply too)
  int max_seq_len = 0;             ///< 0 = the model's context length
  int threads = 0;                 ///< CPU threads; 0 = all
  double inject_decode_delay_us = 0; ///< test hook (engine::BackendOptions): sleep per decoded token
  double inject_prefill_delay_us = 0; ///< test hook (engine::BackendOptions): sleep per prompt token, at chunk boundaries
};

/// A Generator over an engine::Session of a loaded model. Throws engine::EngineError (bad model
/// file, backend not built) or ServerError (model without a tokenizer).
std::unique_ptr<Generator> open_session_generator(const GeneratorOptions& opts);
/// The same over a model already loaded.
std::unique_ptr<Generator> make_session_generator(engine::Model model, const engine::BackendOptions& backend);

/// The chat template stored with a loaded model: metadata "tokenizer.chat_template" (GGUF), or
/// "chat_template" of tokenizer_config.json in the model directory (a string, or the entry
/// named "default" of a list). "" when there is none.
std::string model_chat_template(const engine::Model& model);

}  // namespace atlas::server
