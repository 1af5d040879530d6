#pragma once
// Agentic suite: replays multi-turn tool-use sessions (suites/traces/*.json) against a target.
// The conversation is kept as token ids and every request sends the whole history, so each
// turn's prompt extends the previous turn's prompt + generated tokens exactly and the target
// can reuse its cached prefix. Per turn it measures TTFT, prefix tokens reused and tokens
// prefilled (counted), decode tok/s; per session the wall time and the reuse shortfall.
#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"
#include "records/metric.hpp"
#include "suites/agentic/trace.hpp"
#include "suites/latency.hpp"
#include "suites/suite_options.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

/// What an endpoint target gets for each assistant turn (in-process targets run the ids).
enum class AgenticApi {
  /// The trace's own rendering as token ids (/v1/completions): the prompt the engine runs, so
  /// prompt lengths and reuse compare exactly with in-process records. The default.
  completions,
  /// The conversation as `messages` and `tools` (/v1/chat/completions), what a real agent sends:
  /// the server's chat template then decides the prompt, its length and what can be reused.
  chat,
};

struct AgenticConfig {
  /// Trace files: a name in suites/traces/ ("coding-agent") or a path.
  std::vector<std::string> traces{"coding-agent", "retrieval-agent"};
  /// Multiplies every think_ms of the traces (0: no waiting, as in the PR gate).
  double think_time_scale = 0.0;
  AgenticApi api = AgenticApi::completions;  ///< config "api": "completions" | "chat"

  static AgenticConfig from(const SuiteOptions& options);
  nlohmann::json to_json() const;
};

/// Renders a trace's parts to token ids with a plain chat layout:
///   [BOS] "System: <system>\nTools:\n- name(arg, ...): description\n..."
///   "\nUser: <text>"  "\nTool (<name>): <text>"  "\nAssistant:" <generated ids>
/// Text parts are encoded one by one (add_bos = false); `tokens` parts are seeded filler ids,
/// unique per (seed, trace, message) so no two traces share a prefix by accident.
class TraceRenderer {
 public:
  TraceRenderer(const engine::Tokenizer& tok, const AgenticTrace& trace, std::uint64_t seed);
  std::vector<int> preamble() const;                     ///< BOS + system + tools
  std::vector<int> message(std::size_t index) const;     ///< a user/tool message, header included
  std::vector<int> assistant_header() const;
  std::string message_text(std::size_t index) const;     ///< content as text (filler decoded)
  /// Tokens the whole session needs: last prompt + its max_tokens (outputs have max_tokens ids).
  int token_budget() const;

 private:
  const engine::Tokenizer* tok_;
  const AgenticTrace* trace_;
  std::uint64_t seed_;
};

struct AgenticTurnResult {
  int turn = 0;               ///< 1-based assistant turn
  int prompt_tokens = 0;      ///< the target's usage.prompt_tokens where it reports it
  int expected_reused = 0;    ///< previous prompt + previous outputs - 1 (0 on turn 1)
  /// The prompt extends the previous prompt + output exactly (completions mode with the
  /// target's own output ids): only then is expected_reused a promise a shortfall can break.
  /// Chat mode (the server's template renders the history) and re-encoded text are not exact.
  bool expected_exact = true;
  int reused = 0;             ///< target's cached_tokens
  int prefilled = 0;          ///< prompt_tokens - reused (so reused + prefilled = prompt_tokens)
  int output_tokens = 0;      ///< the target's usage.completion_tokens where it reports it
  std::string ids_source = "target";  ///< where the output ids came from
  nlohmann::json server_timings = nullptr;  ///< the server's own account (llama.cpp timings)
  RequestLatency latency;
};

struct AgenticSessionResult {
  /// The turns that completed, in order; fewer than the trace's when a request failed.
  std::vector<AgenticTurnResult> turns;
  /// The error of the turn whose request failed (turn turns.size() + 1), else empty. The session stops
  /// there (every later turn extends the failed turn's output) and wall_ms is not a session's.
  std::string failed;
  double wall_ms = 0;          ///< first request start to last token, think time included
  std::vector<int> output_ids; ///< all generated ids in order (a fingerprint of the session)
};

/// Runs one session from a fresh target session (reset_session first; a salted target's
/// prompts also get a unique prefix from (cold_salt, session_nonce), so turn 1 is cold on a
/// server that has no reset). Each assistant turn
/// decodes exactly max_tokens (ignore_eos, greedy). The expected reuse of turn k > 1 is the
/// previous prompt plus all but the last generated token: a decode loop never computes the K/V
/// of the token it sampled last. A failed request ends the session (AgenticSessionResult::failed;
/// the turns before it are kept). Throws SuiteError when turn 1 (sent
/// as TargetRequest::cold) comes back with more cached tokens than ColdRequests::allowed_cached
/// allows (chat and completions mode, salted or not).
AgenticSessionResult run_agentic_session(Target& target, const AgenticTrace& trace, std::uint64_t seed,
                                         double think_time_scale, AgenticApi api = AgenticApi::completions,
                                         std::uint64_t session_nonce = 0);

/// Runs every configured trace warmup + repetitions times. Traces whose token budget exceeds
/// the target's context are skipped and listed in details["skipped"].
records::SuiteResult run_agentic_suite(Target& target, const SuiteOptions& options);

}  // namespace atlas::suites
