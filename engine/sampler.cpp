#include "engine/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "engine/error.hpp"

namespace atlas::engine {

int argmax(std::span<const float> v) {
  if (v.empty()) throw EngineError("argmax: empty logits");
  int best = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i] > v[static_cast<std::size_t>(best)]) best = static_cast<int>(i);  // strict: lowest id wins a tie
  }
  return best;
}

Sampler::Sampler(SamplingParams p) : params_(p), rng_(p.seed) {
  if (!std::isfinite(p.temperature) || p.temperature < 0.0f) {
    throw EngineError("sampling: temperature = " + std::to_string(p.temperature) + " is invalid (must be >= 0)");
  }
  if (p.top_k < 0) throw EngineError("sampling: top_k = " + std::to_string(p.top_k) + " is invalid (must be >= 0)");
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) {
    throw EngineError("sampling: top_p = " + std::to_string(p.top_p) + " is invalid (must be in (0, 1])");
  }
}

namespace {
struct Candidate {
  float p;
  int id;
};
// Highest probability first; the lower id first on equal probability, so top-k = 1 is argmax.
bool before(const Candidate& a, const Candidate& b) { return a.p > b.p || (a.p == b.p && a.id < b.id); }
}  // namespace

int Sampler::sample(std::span<const float> logits) {
  if (params_.greedy()) return argmax(logits);
  if (logits.empty()) throw EngineError("sample: empty logits");

  // Softmax of logits / temperature (max subtracted for stability), as llama2.c.
  const float inv_t = 1.0f / params_.temperature;
  float max_l = logits[0];
  for (float l : logits) max_l = std::max(max_l, l);
  std::vector<Candidate> c(logits.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float p = std::exp((logits[i] - max_l) * inv_t);
    c[i] = {p, static_cast<int>(i)};
    sum += p;
  }
  for (auto& x : c) x.p = static_cast<float>(x.p / sum);

  std::size_t n = c.size();
  if (params_.top_k > 0 && static_cast<std::size_t>(params_.top_k) < n) {
    n = static_cast<std::size_t>(params_.top_k);
    std::partial_sort(c.begin(), c.begin() + static_cast<long>(n), c.end(), before);
  } else if (params_.top_p < 1.0f) {
    // llama2.c's shortcut: tokens below (1 - p) / (n - 1) can never be in the nucleus.
    const float cutoff = (1.0f - params_.top_p) / static_cast<float>(c.size() > 1 ? c.size() - 1 : 1);
    auto end = std::partition(c.begin(), c.end(), [&](const Candidate& x) { return x.p >= cutoff; });
    n = static_cast<std::size_t>(end - c.begin());
    if (n == 0) n = c.size();
    std::sort(c.begin(), c.begin() + static_cast<long>(n), before);
  } else {
    std::sort(c.begin(), c.end(), before);
  }
  if (params_.top_p < 1.0f) {
    // Nucleus: the smallest prefix whose cumulative probability exceeds top_p.
    double cum = 0.0;
    std::size_t keep = n;
    for (std::size_t i = 0; i < n; ++i) {
      cum += c[i].p;
      if (cum > params_.top_p) {
        keep = i + 1;
        break;
      }
    }
    n = keep;
  }
  double total = 0.0;
  for (std::size_t i = 0; i < n; ++i) total += c[i].p;
  // A portable uniform in [0, 1): 53 random bits (std::uniform_real_distribution varies by library).
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53 * total;
  double cdf = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    cdf += c[i].p;
    if (u < cdf) return c[i].id;
  }
  return c[n - 1].id;
}

}  // namespace atlas::engine
