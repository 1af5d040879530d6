#pragma once
// Sampling: greedy (argmax, lowest id wins a tie, as llama2.c), temperature, top-k, top-p,
// with a seeded RNG so a run is reproducible.
#include <cstdint>
#include <random>
#include <span>

namespace atlas::engine {

struct SamplingParams {
  float temperature = 0.0f;  ///< 0 = greedy
  int top_k = 0;             ///< 0 = off
  float top_p = 1.0f;        ///< 1 = off
  std::uint64_t seed = 0;
  bool greedy() const { return temperature <= 0.0f; }
};

class Sampler {
 public:
  explicit Sampler(SamplingParams p);
  /// Picks a token from `logits` [vocab]. May reorder a private copy, never the input.
  int sample(std::span<const float> logits);
  const SamplingParams& params() const { return params_; }
  /// A fresh 64-bit value from this sampler's RNG, for a backend that draws on the device
  /// (the run stays reproducible from SamplingParams::seed).
  std::uint64_t next_seed() { return rng_(); }

 private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

/// Index of the largest value; the lowest index wins a tie.
int argmax(std::span<const float> v);

}  // namespace atlas::engine
