#include "suites/endpoint/stream_timing.hpp"

#include <algorithm>
#include <numeric>

namespace atlas::suites::endpoint {

std::vector<std::int64_t> token_arrival_times(std::span<const ChunkArrival> chunks) {
  std::vector<std::int64_t> t;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const int m = std::max(1, chunks[i].tokens);
    if (i == 0) {
      t.insert(t.end(), static_cast<std::size_t>(m), chunks[0].t_ns);
      continue;
    }
    const std::int64_t prev = chunks[i - 1].t_ns;
    const std::int64_t gap = chunks[i].t_ns - prev;
    for (int j = 1; j <= m; ++j) t.push_back(prev + gap * j / m);
  }
  return t;
}

std::vector<ChunkArrival> merge_same_read(std::span<const ChunkArrival> chunks) {
  std::vector<ChunkArrival> out;
  for (const auto& c : chunks) {
    if (!out.empty() && (out.back().t_ns == c.t_ns || (c.wake != 0 && out.back().wake == c.wake))) {
      out.back().tokens += std::max(1, c.tokens);
      out.back().t_ns = std::max(out.back().t_ns, c.t_ns);
    } else {
      out.push_back({c.t_ns, std::max(1, c.tokens), c.wake});
    }
  }
  return out;
}

std::vector<int> distribute_tokens(std::span<const int> weights, int total) {
  const std::size_t n = weights.size();
  std::vector<int> out(n, 1);
  if (n == 0 || total <= static_cast<int>(n)) return out;
  std::vector<long long> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = std::max(1, weights[i]);
  const long long wsum = std::accumulate(w.begin(), w.end(), 0LL);
  // Each chunk has one token already; place the rest proportionally to weight - 1 when the
  // weights say more than one token, else proportionally to the weights.
  const long long extra = total - static_cast<long long>(n);
  std::vector<long long> basis(n);
  long long bsum = wsum - static_cast<long long>(n);
  for (std::size_t i = 0; i < n; ++i) basis[i] = bsum > 0 ? w[i] - 1 : w[i];
  if (bsum <= 0) bsum = wsum;
  long long placed = 0;
  std::vector<std::pair<long long, std::size_t>> rem(n);
  for (std::size_t i = 0; i < n; ++i) {
    const long long share = extra * basis[i] / bsum;
    out[i] += static_cast<int>(share);
    placed += share;
    rem[i] = {extra * basis[i] % bsum, i};
  }
  std::stable_sort(rem.begin(), rem.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; placed < extra; ++k, ++placed) out[rem[k % n].second] += 1;
  return out;
}

}  // namespace atlas::suites::endpoint
