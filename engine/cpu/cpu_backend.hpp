#pragma once
// The CPU backend: the numerical reference of the engine, in float32. A model is a list of
// blocks (engine/cpu/blocks.hpp): Llama (llama2.c run.c forward()) and Qwen3 dense are all
// (attention, swiglu) blocks; Qwen3-Next mixes gated_deltanet and gated_attention mixers with
// moe ffns. Matmuls are multi-threaded.
#include <map>
#include <memory>
#include <vector>

#include "engine/backend.hpp"
#include "engine/cpu/blocks.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "engine/recurrent_checkpoints.hpp"

namespace atlas::engine::cpu {

class CpuBackend final : public Backend {
 public:
  /// Checks every weight's size against the config; throws EngineError naming the tensor.
  /// The model must outlive the backend.
  CpuBackend(const Model& model, const BackendOptions& opts);

  std::string_view name() const override { return "cpu"; }
  int max_seq_len() const override { return max_seq_len_; }
  /// Throws EngineError for an empty batch, a position range past max_seq_len() or a token id
  /// outside the vocabulary, and (hybrid models) a `pos` the recurrent state cannot resume
  /// from: neither 0, the state's current length, nor a saved checkpoint.
  std::span<const float> forward(std::span<const int> tokens, int pos) override;
  int forward_sample(std::span<const int> tokens, int pos, Sampler& sampler) override;
  bool supports_logprobs() const override { return true; }
  int forward_sample_logprobs(std::span<const int> tokens, int pos, Sampler& sampler, int top_n, TokenLogprobs& out) override;

  bool has_recurrent_state() const override { return !recurrent_.empty(); }
  void save_checkpoint() override;
  std::vector<int> checkpoints() const override;

  /// The moe layers' routing hashes combined (engine/routing_fingerprint.hpp, the CUDA
  /// backend's rule); nothing for a model without moe layers.
  std::optional<std::uint64_t> routing_fingerprint() override;
  void reset_routing_fingerprint() override;

  int threads() const { return pool_.size(); }

 private:
  /// Runs tokens at positions [pos, pos + n) (n <= kChunk); computes logits when `last`.
  void forward_chunk(std::span<const int> tokens, int pos, bool last);
  void resume_state_at(int pos);

  const Model* model_;
  ModelConfig c_;
  int max_seq_len_;
  ThreadPool pool_;
  Workspace ws_;
  std::vector<std::unique_ptr<Mixer>> mixers_;  ///< [n_layers]
  std::vector<std::unique_ptr<Ffn>> ffns_;      ///< [n_layers]
  std::vector<Mixer*> recurrent_;               ///< mixers with recurrent state
  RecurrentCheckpoints checkpoints_;            ///< the policy, shared with the CUDA backend
  // Activations of one chunk of tokens.
  std::vector<float> x_;        ///< [chunk][dim] residual stream
  std::vector<float> xb_;       ///< [chunk][dim] normed input / block output
  std::vector<float> rope_cos_, rope_sin_;  ///< [chunk][rot_dim / 2]
  std::vector<float> logits_;   ///< [vocab]
};

}  // namespace atlas::engine::cpu
