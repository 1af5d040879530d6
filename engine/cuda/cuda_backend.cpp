#include "engine/cuda/cuda_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "common/env_flag.hpp"
#include "engine/cuda/cuda_decoder.hpp"
#include "kernels/attention.hpp"
#include "kernels/gemv.hpp"

namespace atlas::engine {
namespace {

class CudaBackend final : public Backend {
 public:
  // The per-token delay test hook (inject_decode_delay_us) is applied by Session for every backend.
  CudaBackend(const Model& model, const BackendOptions& opts)
      : opts_(opts), decoder_(model, decoder_options(opts), model.source.seed) {}

  std::string_view name() const override { return "cuda"; }
  int max_seq_len() const override { return decoder_.max_seq(); }

  std::span<const float> forward(std::span<const int> tokens, int pos) override {
    run(tokens, pos, true, {});
    return decoder_.logits();
  }

  // Greedy, top-k 1 and plain temperature sampling run on the device (no logits copy); top-k > 1
  // and top-p need a sorted candidate set and sample on the host from the copied logits.
  int forward_sample(std::span<const int> tokens, int pos, Sampler& sampler) override {
    if (const auto ds = device_sample(sampler, false)) return run(tokens, pos, false, *ds);
    return sampler.sample(forward(tokens, pos));
  }

  // On the device the log-probabilities are one more kernel after the sampler's, copied back
  // with the chosen id (still one D2H copy per token); a host sampler uses the copied logits.
  bool supports_logprobs() const override { return true; }
  int forward_sample_logprobs(std::span<const int> tokens, int pos, Sampler& sampler, int top_n, TokenLogprobs& out) override {
    if (top_n < 0 || top_n > kMaxTopLogprobs)
      throw EngineError("logprobs: top_n = " + std::to_string(top_n) + " is outside [0, " + std::to_string(kMaxTopLogprobs) + "]");
    const auto ds = device_sample(sampler, true);
    if (!ds) return sample_with_logprobs(forward(tokens, pos), sampler, top_n, out);
    const int id = run(tokens, pos, false, *ds);
    const kernels::StepLogprobs& lp = decoder_.last_logprobs();
    out.chosen = {id, lp.token_logprob};
    out.top.clear();
    for (int i = 0; i < std::min(top_n, lp.n_top); ++i) out.top.push_back({lp.top_ids[i], lp.top_logprobs[i]});
    return id;
  }

  std::vector<GraphVeto> decode_graph_vetoes() const override { return decoder_.vetoes(); }

  bool has_recurrent_state() const override { return decoder_.has_recurrent_state(); }
  void save_checkpoint() override { decoder_.save_checkpoint(); }
  std::vector<int> checkpoints() const override { return decoder_.checkpoints(); }
  std::optional<std::uint64_t> routing_fingerprint() override {
    const std::uint64_t h = decoder_.routing_fingerprint();
    if (h == 0) return std::nullopt;  // no moe layer (a hash of chosen ids is 0 only by a 2^-64 chance)
    return h;
  }
  void reset_routing_fingerprint() override { decoder_.reset_routing_fingerprint(); }

  cuda::CudaDecoder& decoder() { return decoder_; }

 private:
  /// The device draw for `sampler`, or nothing when it needs the host (top-k > 1, top-p).
  static std::optional<cuda::DeviceSample> device_sample(Sampler& sampler, bool logprobs) {
    const SamplingParams& p = sampler.params();
    if (p.greedy() || p.top_k == 1) return cuda::DeviceSample{0.0f, 0, logprobs};
    if (p.top_k == 0 && p.top_p >= 1.0f) return cuda::DeviceSample{p.temperature, sampler.next_seed(), logprobs};
    return std::nullopt;
  }

  /// decoder_.run(), with the prefill's chunks reported to Backend::prefill_chunk_done (the
  /// cancellation check between chunks) while a prefill is watched.
  int run(std::span<const int> tokens, int pos, bool want_logits, cuda::DeviceSample ds) {
    if (!(tokens.size() > 1 && prefill_watched())) return decoder_.run(tokens, pos, want_logits, ds);
    decoder_.set_prefill_chunk_hook([this](int n, bool more) { prefill_chunk_done(n, more); });
    // Cleared however the run ends, so a later direct use of the decoder (the anatomy, the
    // bench: cuda_decoder_of) is not paced by a hook left from a served request.
    struct Clear {
      cuda::CudaDecoder& d;
      ~Clear() { d.set_prefill_chunk_hook({}); }
    } clear{decoder_};
    return decoder_.run(tokens, pos, want_logits, ds);
  }

  static cuda::DecoderOptions decoder_options(const BackendOptions& opts) {
    cuda::DecoderOptions d;
    d.wtype = opts.fp32 ? kernels::ElemType::f32 : kernels::ElemType::bf16;
    d.max_seq = opts.max_seq_len;  // 0: the model's, within the kernels' bound (CudaDecoder)
    d.graphs = opts.decode_graphs && !env_flag("ATLAS_NO_DECODE_GRAPHS");
    d.veto_layer = env_int("ATLAS_CUDA_VETO_LAYER", -1, 1 << 20, -1);  // -1: none
    d.moe_host_routing = env_flag("ATLAS_MOE_HOST_ROUTING");
    if (const char* v = std::getenv("ATLAS_CUDA_SYNC")) d.sync_mode = cuda::parse_sync_mode(v, "ATLAS_CUDA_SYNC");
    d.chunked_prefill = !env_flag("ATLAS_PREFILL_BY_STEPS");  // A/B: prompts as decode steps
    d.profile_step = env_int("ATLAS_CUDA_PROFILE_STEP", 0, 1 << 30, 0);
    // The kernels' own knobs, checked here, before any suite runs: a typo is the input's error
    // (exit 3), not a launch failure inside a suite (reported invalid).
    kernels::gemv_read_env_knobs();
    kernels::attention_read_env_knobs();
    return d;
  }

  BackendOptions opts_;
  cuda::CudaDecoder decoder_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(const Model& model, const BackendOptions& opts) {
  return std::make_unique<CudaBackend>(model, opts);
}

cuda::CudaDecoder* cuda_decoder_of(Backend& backend) {
  auto* b = dynamic_cast<CudaBackend*>(&backend);
  return b ? &b->decoder() : nullptr;
}

}  // namespace atlas::engine
