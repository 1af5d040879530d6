#pragma once
// Cold requests on any target (in process or an HTTP server whose prefix cache may outlive a
// reset): a request no prefix cache can serve, checked against what the target says it served
// from its cache. Used by ttft's cold variant (send) and bfcl's entries (send_scored); agentic
// turn 1 and load requests apply the same salt and the same cached_tokens allowance
// (allowed_cached) in their own loops.
//
// Per request: Target::reset_session(), then Target::cold_salt(). Where the reset is known to
// have emptied the cache (in process; a server whose reset route answered), or where the target
// makes a TargetRequest::cold request cold by itself (llama.cpp: cache_prompt false), the salt is 0 and the
// prompt goes out as built, so prompts, outputs and reuse figures stay comparable with the
// in-process engine. Elsewhere every request gets its own salt (a unique prompt head, as vLLM's
// and AIPerf's benchmarks use a random prefix): the caller's Build puts it at the head of the
// prompt (salted_ids(), salt_text()). The response is then checked: cached_tokens above what a
// cold prompt may share (a BOS; a chat template's head before the salt, at most
// kChatTemplateHeadTokens) is not a cold sample. It is re-issued with a fresh random salt (also
// where the reset claimed success), counted in reissued(); after 3 such responses send() throws
// SuiteError: the target's cold latency cannot be measured.
//
// A salt changes what the model is asked. Where the output is scored (bfcl), send_scored() sends
// the request as built, unsalted, and scores that; where that request cannot be the cold sample
// (a salted target, or a cached answer), a separate salted request is timed and its output
// dropped.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "suites/prompt_builder.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

class ColdRequests {
 public:
  /// Ordinary token ids a salt adds at the prompt's head: 4 ids from a vocabulary of V ordinary
  /// ids is V^4 prompts (stories260K: ~5e10), so two requests never share a salted head.
  static constexpr int kSaltTokens = 4;
  /// A chat request is salted inside its first message: the server's template renders its own
  /// head before it ("<|im_start|>system\n", Llama 3.1's dated preamble ~25 tokens), which every
  /// request shares. Up to this many cached tokens on a salted chat request are that head.
  static constexpr int kChatTemplateHeadTokens = 32;

  explicit ColdRequests(Target& target);

  /// Builds the request for a salt: 0 = send the prompt as it is; else a value unique to this
  /// request, to be put at the prompt's head (salted_ids / salt_text).
  using Build = std::function<TargetRequest(std::uint64_t salt)>;

  /// The most cached tokens a cold request may report: a shared BOS (1 when the tokenizer has
  /// one, else 0); a salted chat request also the server template's head before the salt
  /// (kChatTemplateHeadTokens). Above it, the request was served from a prefix cache.
  static int allowed_cached(const engine::Tokenizer& tok, bool salted, bool chat);

  /// Sends one cold request (above). A failed response (!ok) is returned as it is, neither
  /// checked nor re-issued. Throws SuiteError "<what>: the target reported cached_tokens = N on
  /// 3 cold requests ..." when the target keeps serving it from its cache.
  TargetResponse send(const Build& build, const std::string& what);

  /// bfcl: an answer that is scored and a cold sample that is timed.
  struct Scored {
    TargetResponse answer;  ///< build(0): the request as built, never salted; !ok: the entry failed
    /// The cold sample: `answer` itself where the target emptied its cache (cold_salt() 0 after
    /// the reset) and `answer` reported no cached prefix; else a separate salted request (send's
    /// rules: checked, re-issued, throws after 3 cached responses) whose output is not scored.
    TargetResponse timing;
    bool timed_separately = false;
  };
  /// One reset, then build(0) as the scored answer (TargetRequest::cold set: llama.cpp gets
  /// cache_prompt false), then the timing (Scored). When the answer failed, `timing` is empty
  /// and nothing else is sent. Counts timed_separately().
  Scored send_scored(const Build& build, const std::string& what);
  /// One more salted timing request for the entry send_scored just sent (no reset; send's
  /// checks and re-issues): bfcl re-sends a salted chat request the server refused as over its
  /// context as salted ids.
  TargetResponse send_salted(const Build& build, const std::string& what);

  /// `ids` with kSaltTokens ids drawn from `salt` right after BOS (at the front without one);
  /// when the result is longer than `max_len` the prompt tokens after the salt are dropped from
  /// the head to fit (ttft: the same length; bfcl: its context budget). salt 0: `ids` unchanged.
  std::vector<int> salted_ids(std::span<const int> ids, std::uint64_t salt, std::size_t max_len) const;
  /// The salt as one line of text for the head of a chat prompt's first message:
  /// the kSaltTokens salt ids decoded, then "\n" (no fixed label: a label every request shares
  /// would be one more cached head); "" for salt 0.
  std::string salt_text(std::uint64_t salt) const;

  int salted() const { return salted_; }
  int reissued() const { return reissued_; }
  int timed_separately() const { return timed_separately_; }
  /// details["cold_salted_requests"], details["cold_reissued"] and, after send_scored,
  /// details["cold_timed_separately"].
  void add_details(nlohmann::json& details) const;

 private:
  Target* target_;
  PromptBuilder builder_;
  std::uint64_t fallback_salt_;  ///< random per instance: re-issues never meet an earlier run's prompts
  std::uint64_t nonce_ = 0;
  int salted_ = 0;
  int reissued_ = 0;
  int timed_separately_ = 0;
  bool scored_ = false;  ///< send_scored was used: add_details reports timed_separately

  /// The send loop after the reset: first attempt salted with `first_base` (0: unsalted).
  TargetResponse issue(const Build& build, const std::string& what, std::uint64_t first_base);
};

}  // namespace atlas::suites
