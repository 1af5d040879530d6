#pragma once
// One side of an A/B run: "ATLAS_NO_DECODE_GRAPHS=1 threads=1 backend=cpu". KEY=VALUE words;
// a key starting with an upper-case letter is an environment variable, any other key is a
// target option (for the engine: backend, threads, max_seq_len, decode_graphs, fp32,
// inject_decode_delay_us).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "suites/target.hpp"

namespace atlas::suites {

struct SideSpec {
  std::string label;                          ///< "a" or "b"
  std::string text;                           ///< as given
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> options;
  nlohmann::json to_json() const;
};

/// Throws SuiteError naming the word when one is not KEY=VALUE.
SideSpec parse_side_spec(std::string_view text, std::string label);

/// Sets environment variables for its lifetime and restores the previous values (or unsets).
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::string>& env);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

/// A target whose every call runs with a side's environment applied, so two sides can live in
/// one process and be interleaved whether the engine reads the environment once or per call.
class EnvScopedTarget final : public Target {
 public:
  EnvScopedTarget(std::unique_ptr<Target> inner, std::map<std::string, std::string> env);
  std::string name() const override { return inner_->name(); }
  TargetResponse generate(const TargetRequest& req) override;
  void reset_session() override;
  const engine::Tokenizer& tokenizer() const override { return inner_->tokenizer(); }
  int context_length() const override { return inner_->context_length(); }
  nlohmann::json provenance() const override;
  std::optional<std::uint64_t> routing_fingerprint() override { return inner_->routing_fingerprint(); }
  void reset_routing_fingerprint() override { inner_->reset_routing_fingerprint(); }
  Target& inner() { return *inner_; }

 private:
  std::unique_ptr<Target> inner_;
  std::map<std::string, std::string> env_;
};

}  // namespace atlas::suites
