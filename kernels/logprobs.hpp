#pragma once
// Log-probabilities of a decode step on the device: the log-softmax of the raw logits (before
// temperature, top-k and top-p: vLLM's default "raw_logprobs", OpenAI's `logprobs`) at the
// token the sampler chose, and the kMaxLogprobs most likely tokens. One launch after the
// sampler's, written next to the chosen id so a step still copies one buffer back to the host.
// The host rule it reproduces is engine::raw_logprobs (engine/logprobs.hpp).
#include <cuda_runtime_api.h>

#include <cstddef>

namespace atlas::kernels {

/// As many alternatives as OpenAI's top_logprobs allows (engine::kMaxTopLogprobs).
inline constexpr int kMaxLogprobs = 20;

/// What a step with log-probabilities copies back. `token` comes first and is written by the
/// sampler, so a step without log-probabilities copies only its first 4 bytes.
struct StepLogprobs {
  int token = 0;                  ///< the chosen id (the sampler's output)
  float token_logprob = 0;        ///< log p(token), natural log
  int n_top = 0;                  ///< entries of top_* filled: min(kMaxLogprobs, vocab)
  int top_ids[kMaxLogprobs] = {};  ///< most likely first; the lower id first on equal logits
  float top_logprobs[kMaxLogprobs] = {};
};

/// Fills `out` (device memory) from logits `v` [n] and the chosen id already in out->token:
/// log p_i = v_i - (m + log sum_j exp(v_j - m)), m = max_j v_j, the sum in double. A NaN logit,
/// an infinite maximum or all logits -inf make every log-probability NaN (no distribution); a
/// NaN ranks as -inf in the top list. Exact ties rank the lower id first (as argmax).
/// `scratch` holds logprobs_scratch_bytes(), zeroed once before first use (the kernel leaves
/// it so); one launch, n >= 1.
void token_logprobs(const float* v, int n, StepLogprobs* out, void* scratch, cudaStream_t s);
std::size_t logprobs_scratch_bytes();

}  // namespace atlas::kernels
