#pragma once
// The in-process target: suites drive engine::Engine's Session directly (prompt ids in, ids and
// per-token timestamps out), so TTFT here is the engine's own, with no transport in it.
#include <map>
#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "suites/decode_anatomy/anatomy_source.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

class EngineTarget final : public Target, public AnatomyProvider {
 public:
  /// Opens the engine (engine::Engine::open). `options` are recorded as given in provenance.
  /// Throws engine::EngineError for a bad model file or backend.
  explicit EngineTarget(const engine::EngineOptions& options);
  /// Wraps an open engine (tests).
  EngineTarget(engine::Engine engine, const engine::EngineOptions& options);

  std::string name() const override;  ///< "engine:cpu"
  /// Maps TargetRequest to engine::GenerateRequest: stop ids are the tokenizer's unless
  /// ignore_eos; reuse_prefix as given. An EngineError becomes ok = false with its message.
  TargetResponse generate(const TargetRequest& req) override;
  void reset_session() override;
  const engine::Tokenizer& tokenizer() const override { return *tokenizer_; }
  int context_length() const override;
  /// {"kind": "engine", "backend", "options": {...}, "model": {...}, "decode_graph_vetoes": [...]}.
  nlohmann::json provenance() const override;
  std::unique_ptr<AnatomySource> make_anatomy_source() override;
  std::optional<std::uint64_t> routing_fingerprint() override { return engine_.backend().routing_fingerprint(); }
  void reset_routing_fingerprint() override { engine_.backend().reset_routing_fingerprint(); }

  engine::Engine& engine() { return engine_; }

 private:
  engine::Engine engine_;
  engine::EngineOptions options_;
  const engine::Tokenizer* tokenizer_;
};

/// Applies one "key=value" engine option (A/B sides, CLI): backend, threads, max_seq_len,
/// decode_graphs (0/1/true/false), fp32, inject_decode_delay_us, inject_decode_work. Throws SuiteError naming the
/// key and value when either is not valid.
void apply_engine_option(engine::EngineOptions& options, const std::string& key, const std::string& value);
void apply_engine_options(engine::EngineOptions& options, const std::map<std::string, std::string>& kv);

/// The options as JSON (provenance, records).
nlohmann::json engine_options_json(const engine::EngineOptions& options);

}  // namespace atlas::suites
