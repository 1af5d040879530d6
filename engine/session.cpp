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
  Sampler sampler(req.sampling);

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
  cached_.clear();  // the cache is inconsistent until prefill succeeds
  r.prefix_reused = reuse;
  r.prefilled = n_prompt - reuse;
  int next = 0;
  if (backend_->has_recurrent_state() && n_prompt - 1 > reuse) {
    // Checkpoint the state before the last prompt token too: the same prompt sent again (a
    // retry, a warm TTFT run) then reuses all but its last token, as a KV cache would.
    backend_->forward(std::span<const int>(prompt.data() + reuse, static_cast<std::size_t>(n_prompt - 1 - reuse)), reuse);
    backend_->save_checkpoint();
    next = backend_->forward_sample(std::span<const int>(prompt.data() + n_prompt - 1, 1), n_prompt - 1, sampler);
  } else {
    const std::span<const int> suffix(prompt.data() + reuse, static_cast<std::size_t>(n_prompt - reuse));
    next = backend_->forward_sample(suffix, reuse, sampler);
  }
  cached_ = prompt;
  backend_->save_checkpoint();  // hybrid models: the state after the prompt (no-op otherwise)

  for (;;) {
    if (static_cast<int>(r.output_ids.size()) >= req.max_new_tokens) {
      r.stop = StopReason::max_tokens;
      break;
    }
    if (std::find(req.stop_ids.begin(), req.stop_ids.end(), next) != req.stop_ids.end()) {
      r.stop = StopReason::stop_token;
      break;
    }
    const std::int64_t t = atlas::now_ns();
    const TokenEvent ev{next, static_cast<int>(r.output_ids.size()), t};
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
    next = backend_->forward_sample(std::span<const int>(&token, 1), pos, sampler);
    cached_.push_back(token);
  }
  backend_->save_checkpoint();  // the state after the finished turn: the next turn's prefix
  r.t_end_ns = atlas::now_ns();
  return r;
}

}  // namespace atlas::engine
