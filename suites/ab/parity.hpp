#pragma once
// Greedy output parity between two targets over a set of short synthetic prompts: the check
// that an A/B "speedup" did not change what the model says.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/progress.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

struct ParityConfig {
  int prompts = 200;         ///< number of prompts
  int min_length = 4;        ///< prompt lengths are drawn in [min_length, max_length]
  int max_length = 24;
  int max_new_tokens = 16;   ///< greedy; stops at the tokenizer's stop ids like a real request
  std::uint64_t seed = 1;
};

struct ParityMismatch {
  int prompt_index = 0;
  std::vector<int> prompt_ids;
  std::string prompt_text;
  int position = 0;           ///< first output index where the sides differ
  std::vector<int> a_ids, b_ids;
  std::string a_text, b_text;
};

/// A prompt whose routing fingerprints differ (engine/routing_fingerprint.hpp): some moe layer
/// chose another expert at some step, whether or not the output text changed.
struct RoutingMismatch {
  int prompt_index = 0;
  std::uint64_t a = 0, b = 0;
};

struct ParityReport {
  int prompts = 0;
  std::vector<ParityMismatch> mismatches;
  /// Prompts whose routing both sides fingerprinted (0: a side keeps none, e.g. a dense model or
  /// an HTTP endpoint; then routing was not compared).
  int routed_prompts = 0;
  std::vector<RoutingMismatch> routing_mismatches;
  /// Every routed prompt's fingerprint folded in prompt order, per side: equal means identical
  /// routing over the whole prompt set (printed, so two ab runs can be compared by eye).
  std::uint64_t routing_a = 0, routing_b = 0;
  /// Why routing was not compared when routed_prompts is 0 ("" otherwise).
  std::string routing_not_compared;
  nlohmann::json to_json() const;
};

/// "0x" and 16 lower-case hex digits.
std::string hex64(std::uint64_t v);

/// The prompt set (deterministic in cfg.seed and the tokenizer).
std::vector<std::vector<int>> parity_prompts(const engine::Tokenizer& tok, const ParityConfig& cfg);

/// Index of the first differing element; min(a.size(), b.size()) when one is a prefix of the
/// other; -1 when equal.
int first_divergence(const std::vector<int>& a, const std::vector<int>& b);

/// Runs every prompt on a then b (session reset, no prefix reuse) and compares output ids (or,
/// for targets that return no ids, the re-encoded text) and, where both targets keep one, the
/// routing fingerprint of each prompt's request (reset before it). Throws SuiteError when a
/// request fails.
ParityReport check_parity(Target& a, Target& b, const ParityConfig& cfg, Progress* progress = nullptr);

}  // namespace atlas::suites
