#include "engine/cuda/cuda_backend.hpp"

#include <cstdlib>
#include <string>

#include "common/env_flag.hpp"
#include "engine/cuda/cuda_decoder.hpp"

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
    decoder_.run(tokens, pos, true);
    return decoder_.logits();
  }

  // Greedy, top-k 1 and plain temperature sampling run on the device (no logits copy); top-k > 1
  // and top-p need a sorted candidate set and sample on the host from the copied logits.
  int forward_sample(std::span<const int> tokens, int pos, Sampler& sampler) override {
    const SamplingParams& p = sampler.params();
    if (p.greedy() || p.top_k == 1) return decoder_.run(tokens, pos, false);
    if (p.top_k == 0 && p.top_p >= 1.0f) return decoder_.run(tokens, pos, false, {p.temperature, sampler.next_seed()});
    return sampler.sample(forward(tokens, pos));
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
  static cuda::DecoderOptions decoder_options(const BackendOptions& opts) {
    cuda::DecoderOptions d;
    d.wtype = opts.fp32 ? kernels::DType::f32 : kernels::DType::bf16;
    d.max_seq = opts.max_seq_len;  // 0: the model's, within the kernels' bound (CudaDecoder)
    d.graphs = opts.decode_graphs && !env_flag("ATLAS_NO_DECODE_GRAPHS");
    if (const char* v = std::getenv("ATLAS_CUDA_VETO_LAYER"); v && *v) d.veto_layer = std::atoi(v);
    d.moe_host_routing = env_flag("ATLAS_MOE_HOST_ROUTING");
    if (const char* v = std::getenv("ATLAS_CUDA_SYNC")) d.sync_mode = cuda::parse_sync_mode(v, "ATLAS_CUDA_SYNC");
    d.chunked_prefill = !env_flag("ATLAS_PREFILL_BY_STEPS");  // A/B: prompts as decode steps
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
