#pragma once
// The model's head on the device: the token embedding (and the step's RoPE table), the final
// RMSNorm + lm_head GEMV, and the choice of the next token (greedy or a temperature draw) on
// the device, so a decode step returns one int.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "engine/cuda/blocks/device_block.hpp"
#include "kernels/logprobs.hpp"
#include "kernels/sampling.hpp"

namespace atlas::engine::cuda {

class DeviceHead {
 public:
  DeviceHead(const ModelConfig& c, kernels::ElemType wt);
  void layout(Arenas& a);
  void upload(const ModelWeights& w, Uploader& up);

  /// x = embedding[*token]; the step's RoPE table from *pos. One launch.
  void embed(StepContext& s, const int* token);
  /// logits = lm_head(RMSNorm(x)); *token_out = the next token (sampling params in device memory).
  void logits_and_sample(LaunchTape& tape, const float* x, const kernels::DeviceSampling* sampling, int* token_out);
  /// out->token_logprob and out->top_*: the raw distribution's log-probabilities of the logits
  /// logits_and_sample() left, at the id the sampler wrote into out->token. One launch (stage
  /// `sample`), enqueued only for a request that asks for them.
  void logprobs(LaunchTape& tape, kernels::StepLogprobs* out);
  /// x[i] = embedding[tokens[i]], i < n.
  void embed_rows(LaunchTape& tape, const int* tokens, int n, float* x);

  const float* logits() const { return logits_; }
  const float* rope_table() const { return rope_cs_; }
  /// Bytes a decode step reads: one embedding row, the final norm and the lm_head matrix.
  std::size_t bytes_per_token() const;
  std::size_t weight_bytes() const { return weight_bytes_; }

 private:
  const ModelConfig& c_;
  kernels::ElemType wt_;
  int ld_dim_ = 0;
  std::size_t weight_bytes_ = 0;
  void *tok_embd_ = nullptr, *output_ = nullptr;
  float* output_norm_ = nullptr;  ///< gain, float32
  float* logits_ = nullptr;    ///< [vocab]
  float* rope_cs_ = nullptr;   ///< [head_dim]
  void* argmax_scratch_ = nullptr;
  void* logprobs_scratch_ = nullptr;
};

}  // namespace atlas::engine::cuda
