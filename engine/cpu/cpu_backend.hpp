#pragma once
// The CPU backend: the numerical reference of the engine. Llama (llama2.c run.c forward()) and
// Qwen3 dense (per-head q/k RMSNorm before RoPE, decoupled head_dim) in float32, with a
// float32 KV cache [layer][pos][kv_dim] and multi-threaded matmuls.
#include <memory>
#include <vector>

#include "engine/backend.hpp"
#include "engine/cpu/thread_pool.hpp"

namespace atlas::engine::cpu {

class CpuBackend final : public Backend {
 public:
  /// Checks every weight's size against the config; throws EngineError naming the tensor.
  /// The model must outlive the backend.
  CpuBackend(const Model& model, const BackendOptions& opts);

  std::string_view name() const override { return "cpu"; }
  int max_seq_len() const override { return max_seq_len_; }
  /// Throws EngineError for an empty batch, a position range past max_seq_len() or a token id
  /// outside the vocabulary.
  std::span<const float> forward(std::span<const int> tokens, int pos) override;
  int forward_sample(std::span<const int> tokens, int pos, Sampler& sampler) override;

  int threads() const { return pool_.size(); }

 private:
  /// Runs tokens at positions [pos, pos + n) (n <= kChunk); computes logits when `last`.
  void forward_chunk(std::span<const int> tokens, int pos, bool last);
  void attention_block(int layer, int n, int pos);
  float* key_cache(int layer, int pos);
  float* value_cache(int layer, int pos);

  const Model* model_;
  ModelConfig c_;
  int max_seq_len_;
  ThreadPool pool_;
  std::vector<float> key_cache_, value_cache_;  ///< [n_layers][max_seq_len][kv_dim]
  // Activations of one chunk of tokens.
  std::vector<float> x_;        ///< [chunk][dim] residual stream
  std::vector<float> xb_;       ///< [chunk][dim] normed input / projection output
  std::vector<float> q_;        ///< [chunk][q_dim]
  std::vector<float> att_;      ///< [chunk][q_dim] attention output
  std::vector<float> hb_, hb2_; ///< [chunk][hidden_dim] gate, up
  std::vector<float> rope_cos_, rope_sin_;  ///< [chunk][head_dim / 2]
  std::vector<float> scores_;   ///< [threads][max_seq_len]
  std::vector<float> logits_;   ///< [vocab]
};

}  // namespace atlas::engine::cpu
