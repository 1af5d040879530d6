#pragma once
// A backend runs the forward pass over its own KV cache. The CPU backend is the numerical
// reference; the CUDA backend is checked against it.
#include <memory>
#include <optional>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model.hpp"
#include "engine/decode_delay.hpp"
#include "engine/logprobs.hpp"
#include "engine/sampler.hpp"
#include "engine/stage.hpp"

namespace atlas::engine {

/// Why a layer cannot be captured in the decode CUDA graph (empty list: capture allowed).
struct GraphVeto {
  std::string layer;   ///< e.g. "blk.3.attention"
  std::string reason;
};

struct BackendOptions {
  std::string name = "cpu";   ///< "cpu" | "cuda"
  int max_seq_len = 0;        ///< KV cache capacity; 0 = model's
  int threads = 0;            ///< CPU threads; 0 = hardware_concurrency
  bool fp32 = false;          ///< CUDA: fp32 weights (parity tests) instead of bf16
  bool decode_graphs = true;  ///< CUDA: capture/replay decode (ATLAS_NO_DECODE_GRAPHS=1 turns off)
  /// Test hook (documented in README): adds this many microseconds of wall time per decoded
  /// token by sleeping (engine/decode_delay.hpp: no extra instructions), so a planted slowdown
  /// can prove the gate's timed judgement catches it. Fractions allowed; 0 = off.
  double inject_decode_delay_us = 0;
  /// Test hook: runs this many iterations of a xorshift loop the compiler cannot drop per
  /// decoded token (12 instructions each with GCC 12 -O3), so a planted *extra-work* commit can
  /// prove the instruction-count gate catches it on any box. 0 = off.
  int inject_decode_work = 0;
  /// Test hook: microseconds slept per prompt token at each prefill chunk boundary of a backend
  /// that reports its chunks (Backend::prefill_chunk_done; the CPU and CUDA backends), so a test can hold
  /// a prefill long enough to leave during it on a tiny model. 0 = off.
  double inject_prefill_delay_us = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual int max_seq_len() const = 0;
  /// Runs `tokens` at positions [pos, pos + tokens.size()), writing their K/V into the cache,
  /// and returns the logits [vocab] of the last position (valid until the next call).
  /// Positions >= pos are overwritten: truncating the cache is implicit.
  virtual std::span<const float> forward(std::span<const int> tokens, int pos) = 0;
  /// forward() then picks the next token. A GPU backend overrides this to sample greedily on
  /// the device and read back one int.
  virtual int forward_sample(std::span<const int> tokens, int pos, Sampler& sampler) {
    return sampler.sample(forward(tokens, pos));
  }
  /// Whether forward_sample_logprobs() is implemented. The server asks before it admits a
  /// request for logprobs, so a backend without them answers 400, not a wrong answer.
  virtual bool supports_logprobs() const { return false; }
  /// forward_sample(), and in `out` the log-probabilities of the raw distribution (engine/
  /// logprobs.hpp: log-softmax of the logits, before temperature / top-k / top-p) at the chosen
  /// token and at the `top_n` (0..kMaxTopLogprobs) most likely ones. The default throws
  /// UnsupportedFeatureError naming the backend. A backend with the logits on the host calls
  /// sample_with_logprobs(); a device sampler computes the log-sum-exp and the top-n beside its
  /// argmax and copies them back with the chosen id (one copy per token).
  virtual int forward_sample_logprobs(std::span<const int> tokens, int pos, Sampler& sampler, int top_n, TokenLogprobs& out);
  virtual StageTimer& stage_timer() { return timer_; }
  virtual std::vector<GraphVeto> decode_graph_vetoes() const { return {}; }

  /// Hybrid models keep a recurrent state (Gated DeltaNet) that, unlike a KV cache, cannot be
  /// truncated: forward() can only continue a sequence from pos 0, from the state's current
  /// length, or from a checkpoint. save_checkpoint() keeps a copy of the state as it is now
  /// (after every token forward() has run); checkpoints() lists the saved lengths, ascending.
  virtual bool has_recurrent_state() const { return false; }
  virtual void save_checkpoint() {}
  virtual std::vector<int> checkpoints() const { return {}; }

  /// A hash of every expert id every moe layer chose since the last reset, layer by layer and
  /// step by step (equal: identical routing; the rule: engine/routing_fingerprint.hpp); nothing
  /// for a backend that keeps none or a model without moe layers. The CUDA backend keeps it on
  /// the device (no copy per step), the CPU backend in its moe blocks.
  virtual std::optional<std::uint64_t> routing_fingerprint() { return std::nullopt; }
  virtual void reset_routing_fingerprint() {}

  /// BackendOptions::inject_decode_delay_us, which Session sleeps off per decoded token.
  /// make_backend() sets it for every backend it creates.
  double inject_decode_delay_us() const { return decode_delay_.us(); }
  void set_inject_decode_delay_us(double us) { decode_delay_.set(us); }
  DecodeDelay& decode_delay() { return decode_delay_; }

  /// BackendOptions::inject_decode_work, which Session runs per decoded token.
  int inject_decode_work() const { return inject_decode_work_; }
  void set_inject_decode_work(int iterations) { inject_decode_work_ = iterations < 0 ? 0 : iterations; }

  /// Session brackets each request's prefill with these: in between, prefill_chunk_done() asks
  /// `cancelled` (may be empty) between chunks and sleeps the prefill delay hook. A long prompt
  /// of a client that left then stops at the next chunk boundary instead of running to its end.
  void begin_prefill(std::function<bool()> cancelled) {
    prefill_cancelled_ = std::move(cancelled);
    in_prefill_ = true;
  }
  void end_prefill() {
    prefill_cancelled_ = nullptr;
    in_prefill_ = false;
  }
  /// BackendOptions::inject_prefill_delay_us; make_backend() sets it.
  void set_inject_prefill_delay_us(double us) { prefill_delay_us_ = us > 0 ? us : 0; }

 protected:
  /// For a backend whose forward() runs a prompt in chunks: call after each chunk of
  /// `chunk_tokens` tokens, `more` when chunks follow. Inside a prefill (begin_prefill) it sleeps
  /// the test delay for those tokens and, when `more` and the installed check says so, throws
  /// GenerationCancelled. A backend that never calls it runs every prefill to its end (Session
  /// still checks before and after it).
  void prefill_chunk_done(int chunk_tokens, bool more);
  /// Whether a prefill now in progress has someone to call prefill_chunk_done() for (a
  /// cancellation check or the delay hook): a backend that must pace its chunks to make a stop
  /// worth anything (the CUDA backend) paces only then.
  bool prefill_watched() const { return in_prefill_ && (prefill_cancelled_ || prefill_delay_us_ > 0); }
  /// forward_sample_logprobs() over logits on the host: samples, then raw_logprobs().
  int sample_with_logprobs(std::span<const float> logits, Sampler& sampler, int top_n, TokenLogprobs& out);

  StageTimer timer_;
  DecodeDelay decode_delay_;
  int inject_decode_work_ = 0;

 private:
  std::function<bool()> prefill_cancelled_;
  bool in_prefill_ = false;
  double prefill_delay_us_ = 0;
};

/// Creates the named backend ("cpu" or "cuda"); throws EngineError for a backend not built in.
std::unique_ptr<Backend> make_backend(const Model& model, const BackendOptions& opts);

/// `base` with the environment applied: ATLAS_NO_DECODE_GRAPHS on (common/env_flag.hpp) sets
/// decode_graphs = false; ATLAS_THREADS=N (N >= 1) sets threads. Throws EngineError for a
/// malformed ATLAS_THREADS, InputError for a value of ATLAS_NO_DECODE_GRAPHS that is no boolean.
BackendOptions backend_options_from_env(BackendOptions base);

}  // namespace atlas::engine
