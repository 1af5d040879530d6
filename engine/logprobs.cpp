#include "engine/logprobs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace atlas::engine {

TokenLogprobs raw_logprobs(std::span<const float> logits, int chosen, int top_n) {
  if (logits.empty()) throw EngineError("logprobs: empty logits");
  if (chosen < 0 || static_cast<std::size_t>(chosen) >= logits.size()) {
    throw EngineError("logprobs: chosen token " + std::to_string(chosen) + " is outside the vocabulary of " +
                      std::to_string(logits.size()));
  }
  if (top_n < 0 || top_n > kMaxTopLogprobs) {
    throw EngineError("logprobs: top_n = " + std::to_string(top_n) + " is outside [0, " + std::to_string(kMaxTopLogprobs) + "]");
  }
  // log p_i = l_i - (m + log sum_j exp(l_j - m)), m = max_j l_j: no exp overflows, and the
  // largest term is exp(0) = 1, so the sum is in [1, vocab] and its log is exact to double
  // precision. The sum runs in double: in float, 150k terms would lose ~1e-3 relative.
  float m = -std::numeric_limits<float>::infinity();
  bool nan = false;
  for (float l : logits) {
    if (std::isnan(l)) nan = true;
    m = std::max(m, l);
  }
  double lse = std::numeric_limits<double>::quiet_NaN();
  if (!nan && std::isfinite(m)) {
    double sum = 0.0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - m);
    lse = static_cast<double>(m) + std::log(sum);
  }
  // All logits -inf, or +inf among them: no distribution (NaN), as for a NaN logit.
  auto lp = [&](int id) { return static_cast<float>(static_cast<double>(logits[static_cast<std::size_t>(id)]) - lse); };

  TokenLogprobs out;
  out.chosen = {chosen, lp(chosen)};
  const std::size_t n = std::min(static_cast<std::size_t>(top_n), logits.size());
  if (n == 0) return out;
  // A running top-n by insertion: n <= 20, so this beats sorting the vocabulary.
  std::vector<int> best;
  best.reserve(n + 1);
  auto key = [&](int id) {  // a NaN ranks last, so the order stays a strict weak order
    const float l = logits[static_cast<std::size_t>(id)];
    return std::isnan(l) ? -std::numeric_limits<float>::infinity() : l;
  };
  auto before = [&](int a, int b) {  // higher logit first, the lower id on a tie
    const float la = key(a), lb = key(b);
    return la > lb || (la == lb && a < b);
  };
  for (int id = 0; id < static_cast<int>(logits.size()); ++id) {
    if (best.size() == n && !before(id, best.back())) continue;
    best.insert(std::upper_bound(best.begin(), best.end(), id, before), id);
    if (best.size() > n) best.pop_back();
  }
  out.top.reserve(n);
  for (int id : best) out.top.push_back({id, lp(id)});
  return out;
}

}  // namespace atlas::engine
