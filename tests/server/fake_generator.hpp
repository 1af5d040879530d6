#pragma once
// Test doubles for the server: a byte tokenizer (id = byte + 3, BOS 1, EOS 2) and a generator
// that "decodes" a scripted reply, with Session's prefix-reuse and cache semantics and an
// optional delay per token, so server behaviour is tested without a model.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "common/clock.hpp"
#include "engine/error.hpp"
#include "server/generator.hpp"

namespace atlas::test {

class ByteTokenizer final : public engine::Tokenizer {
 public:
  std::vector<int> encode(std::string_view text, bool add_bos) const override {
    ++encode_calls;
    std::vector<int> ids;
    if (add_bos) ids.push_back(1);
    for (unsigned char c : text) ids.push_back(c + 3);
    return ids;
  }
  /// Records the limit the server asks with, then counts as the default does.
  std::optional<std::vector<int>> encode_at_most(std::string_view text, bool add_bos, std::size_t max_ids) const override {
    last_max_ids = max_ids;
    return Tokenizer::encode_at_most(text, add_bos, max_ids);
  }
  std::string token_bytes(int, int id) const override {
    if (id < 3) return {};
    return std::string(1, static_cast<char>(id - 3));
  }
  int vocab_size() const override { return 259; }
  std::optional<int> bos_id() const override { return 1; }
  std::optional<int> eos_id() const override { return 2; }
  std::vector<int> stop_ids() const override { return {2}; }
  std::optional<int> piece_to_id(std::string_view) const override { return std::nullopt; }
  mutable std::atomic<int> encode_calls{0};  ///< encode() calls so far
  mutable std::atomic<std::size_t> last_max_ids{0};  ///< the last encode_at_most's limit
};

/// Replies with `reply` (one token per byte, then EOS, then 'x' forever), sleeping `token_delay`
/// before each. With logprobs_supported, token i gets logprob -(i + 1) / 4 and alternatives
/// id + 1, id + 2, ... at -(i + 1) / 4 - 1, - 2, ...; stop ids count from min_new_tokens on.
class FakeGenerator final : public server::Generator {
 public:
  std::string reply = "Hello world";
  std::chrono::microseconds token_delay{0};
  int context = 512;
  int fail_after = -1;  ///< >= 0: throw EngineError after this many tokens (an engine failure)
  std::string template_source;
  int generate_calls = 0;
  bool logprobs_supported = false;
  std::string backend = "fake";
  std::vector<int> last_prompt;

  const engine::Tokenizer& tokenizer() const override { return tok_; }
  const ByteTokenizer& byte_tokenizer() const { return tok_; }
  int context_length() const override { return context; }
  bool supports_logprobs() const override { return logprobs_supported; }
  std::string backend_name() const override { return backend; }
  engine::GenerateResult generate(const engine::GenerateRequest& req,
                                  const std::function<void(const engine::TokenEvent&)>& on_token) override {
    ++generate_calls;
    last_prompt = req.prompt_ids;
    engine::GenerateResult r;
    r.t_start_ns = now_ns();
    const int n = static_cast<int>(req.prompt_ids.size());
    if (n > context) throw engine::EngineError("prompt longer than the context");
    int reuse = 0;
    if (req.reuse_prefix) {
      while (reuse < n - 1 && reuse < static_cast<int>(cached_.size()) && cached_[reuse] == req.prompt_ids[reuse]) ++reuse;
    }
    r.prefix_reused = reuse;
    r.prefilled = n - reuse;
    cached_ = req.prompt_ids;
    std::vector<int> script = tok_.encode(reply, false);
    script.push_back(2);
    for (std::size_t i = 0;; ++i) {
      if (static_cast<int>(r.output_ids.size()) >= req.max_new_tokens) break;
      if (fail_after >= 0 && static_cast<int>(r.output_ids.size()) == fail_after) {
        throw engine::EngineError("scripted failure after " + std::to_string(fail_after) + " tokens");
      }
      const int next = i < script.size() ? script[i] : 'x' + 3;
      if (static_cast<int>(r.output_ids.size()) >= req.min_new_tokens &&
          std::find(req.stop_ids.begin(), req.stop_ids.end(), next) != req.stop_ids.end()) {
        r.stop = engine::StopReason::stop_token;
        break;
      }
      if (token_delay.count() > 0) std::this_thread::sleep_for(token_delay);
      engine::TokenEvent ev{next, static_cast<int>(r.output_ids.size()), now_ns(), std::nullopt};
      if (req.logprobs) {
        if (!logprobs_supported) throw engine::UnsupportedFeatureError(backend, "logprobs");
        const float lp = -static_cast<float>(r.output_ids.size() + 1) / 4;
        engine::TokenLogprobs t{{next, lp}, {}};
        for (int k = 1; k <= req.top_logprobs; ++k) t.top.push_back({(next + k) % 259, lp - static_cast<float>(k)});
        ev.logprobs = t;
        r.logprobs.push_back(t);
      }
      r.output_ids.push_back(next);
      r.token_t_ns.push_back(ev.t_ns);
      if (on_token) on_token(ev);
      if (static_cast<int>(cached_.size()) >= context) {
        r.stop = engine::StopReason::context_full;
        break;
      }
      cached_.push_back(next);
    }
    r.t_end_ns = now_ns();
    return r;
  }
  void reset() override { cached_.clear(); }
  const std::vector<int>& cached_tokens() const override { return cached_; }
  std::string chat_template() const override { return template_source; }

 private:
  ByteTokenizer tok_;
  std::vector<int> cached_;
};

}  // namespace atlas::test
