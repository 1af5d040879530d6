#include "engine/session.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/clock.hpp"
#include "engine/error.hpp"

namespace atlas::engine {

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::max_tokens: return "max_tokens";
    case StopReason::stop_token: return "stop_token";
    case StopReason::context_full: return "context_full";
  }
  return "unknown";
}

namespace {
// The extra-work test hook: `iterations` xorshift64 steps. The empty asm makes every step's
// value observable, so the optimiser can neither fold the loop nor drop it; the result goes to
// a volatile sink for the same reason. Instruction count is linear in `iterations` and does
// not depend on time (unlike the delay hook's sleep, which adds no instructions).
volatile std::uint64_t g_work_sink = 0;
void extra_work(int iterations) {
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < iterations; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    asm volatile("" : "+r"(x));
  }
  g_work_sink = x;
}
}  // namespace

GenerateResult Session::generate(const GenerateRequest& req, const std::function<void(const TokenEvent&)>& on_token) {
  GenerateResult r;
  r.t_start_ns = atlas::now_ns();
  const auto& prompt = req.prompt_ids;
  const int n_prompt = static_cast<int>(prompt.size());
  const int context = backend_->max_seq_len();
  if (n_prompt == 0) throw EngineError("generate: prompt_ids is empty (at least one token, e.g. BOS, is needed)");
  if (n_prompt > context) {
    throw EngineError("generate: prompt of " + std::to_string(n_prompt) + " tokens exceeds the context of " +
                      std::to_string(context) + " tokens (max_seq_len)");
  }
  if (req.max_new_tokens < 0) {
    throw EngineError("generate: max_new_tokens = " + std::to_string(req.max_new_tokens) + " is invalid (must be >= 0)");
  }
  if (req.min_new_tokens < 0 || req.min_new_tokens > req.max_new_tokens) {
    throw EngineError("generate: min_new_tokens = " + std::to_string(req.min_new_tokens) + " is invalid (must be in [0, max_new_tokens = " +
                      std::to_string(req.max_new_tokens) + "])");
  }
  if (req.logprobs) {
    if (req.top_logprobs < 0 || req.top_logprobs > kMaxTopLogprobs) {
      throw EngineError("generate: top_logprobs = " + std::to_string(req.top_logprobs) + " is invalid (must be in [0, " +
                        std::to_string(kMaxTopLogprobs) + "])");
    }
    if (!backend_->supports_logprobs()) throw UnsupportedFeatureError(std::string(backend_->name()), "logprobs");
  }
  Sampler sampler(req.sampling);
  TokenLogprobs next_lp;  // the log-probabilities of `next`, when asked
  auto forward_sample = [&](std::span<const int> tokens, int pos) {
    if (!req.logprobs) return backend_->forward_sample(tokens, pos, sampler);
    return backend_->forward_sample_logprobs(tokens, pos, sampler, req.top_logprobs, next_lp);
  };
  auto check_cancelled = [&](const char* where) {
    if (req.cancelled && req.cancelled()) throw GenerationCancelled(std::string("generation cancelled ") + where);
  };

  // Reuse the longest common prefix of cached K/V, but always run at least the last prompt
  // token so its logits exist.
  int reuse = 0;
  if (req.reuse_prefix) {
    const auto mismatch = std::mismatch(prompt.begin(), prompt.end(), cached_.begin(), cached_.end());
    reuse = std::min(static_cast<int>(mismatch.first - prompt.begin()), n_prompt - 1);
    if (backend_->has_recurrent_state()) {
      // A recurrent state cannot be truncated: resume from the longest checkpoint within the
      // common prefix (or the live state when it is exactly the common prefix).
      int best = 0;
      if (reuse == static_cast<int>(cached_.size())) best = reuse;
      for (int n : backend_->checkpoints()) {
        if (n <= reuse) best = std::max(best, n);
      }
      reuse = best;
    }
  }
  check_cancelled("before the prefill");
  cached_.clear();  // the cache is inconsistent until prefill succeeds
  r.prefix_reused = reuse;
  r.prefilled = n_prompt - reuse;
  int next = 0;
  {
    // Ends the bracket on every path, GenerationCancelled from a chunk boundary included.
    struct PrefillBracket {
      Backend& b;
      PrefillBracket(Backend& backend, std::function<bool()> c) : b(backend) { b.begin_prefill(std::move(c)); }
      ~PrefillBracket() { b.end_prefill(); }
      PrefillBracket(const PrefillBracket&) = delete;
      PrefillBracket& operator=(const PrefillBracket&) = delete;
    } bracket(*backend_, req.cancelled);
    if (backend_->has_recurrent_state() && n_prompt - 1 > reuse) {
      // Checkpoint the state before the last prompt token too: the same prompt sent again (a
      // retry, a warm TTFT run) then reuses all but its last token, as a KV cache would.
      backend_->forward(std::span<const int>(prompt.data() + reuse, static_cast<std::size_t>(n_prompt - 1 - reuse)), reuse);
      backend_->save_checkpoint();
      check_cancelled("during the prefill");
      next = forward_sample(std::span<const int>(prompt.data() + n_prompt - 1, 1), n_prompt - 1);
    } else {
      const std::span<const int> suffix(prompt.data() + reuse, static_cast<std::size_t>(n_prompt - reuse));
      next = forward_sample(suffix, reuse);
    }
  }
  cached_ = prompt;
  backend_->save_checkpoint();  // hybrid models: the state after the prompt (no-op otherwise)
  check_cancelled("after the prefill");  // the prompt stays cached for a retry

  for (;;) {
    if (static_cast<int>(r.output_ids.size()) >= req.max_new_tokens) {
      r.stop = StopReason::max_tokens;
      break;
    }
    if (static_cast<int>(r.output_ids.size()) >= req.min_new_tokens &&
        std::find(req.stop_ids.begin(), req.stop_ids.end(), next) != req.stop_ids.end()) {
      r.stop = StopReason::stop_token;
      break;
    }
    const std::int64_t t = atlas::now_ns();
    TokenEvent ev{next, static_cast<int>(r.output_ids.size()), t, std::nullopt};
    if (req.logprobs) {
      ev.logprobs = next_lp;
      r.logprobs.push_back(next_lp);
    }
    r.output_ids.push_back(next);
    r.token_t_ns.push_back(t);
    if (on_token) on_token(ev);
    if (static_cast<int>(r.output_ids.size()) >= req.max_new_tokens) {
      r.stop = StopReason::max_tokens;
      break;
    }
    const int pos = static_cast<int>(cached_.size());
    if (pos >= context) {
      r.stop = StopReason::context_full;
      break;
    }
    backend_->decode_delay().on_decode_step();  // test hook: sleeps, 0 = off
    if (backend_->inject_decode_work() > 0) extra_work(backend_->inject_decode_work());  // test hook
    const int token = next;
    next = forward_sample(std::span<const int>(&token, 1), pos);
    cached_.push_back(token);
  }
  backend_->save_checkpoint();  // the state after the finished turn: the next turn's prefix
  r.t_end_ns = atlas::now_ns();
  return r;
}

}  // namespace atlas::engine
