#include "suites/decode_anatomy/latency_series.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "records/stats.hpp"

namespace atlas::suites {

LatencySeriesSummary summarize_latency_series(std::span<const double> gaps_us) {
  if (gaps_us.size() < 2)
    throw std::invalid_argument("latency series: " + std::to_string(gaps_us.size()) + " gaps, at least 2 needed");
  namespace st = records::stats;
  LatencySeriesSummary s;
  s.n = static_cast<int>(gaps_us.size());
  s.p50_us = st::percentile(gaps_us, 50);
  s.p99_us = st::percentile(gaps_us, 99);
  s.max_us = *std::max_element(gaps_us.begin(), gaps_us.end());
  std::vector<double> dev(gaps_us.size());
  for (std::size_t i = 0; i < gaps_us.size(); ++i) dev[i] = std::fabs(gaps_us[i] - s.p50_us);
  s.robust_sd_us = std::max(1.4826 * st::median(dev), 0.01 * std::fabs(s.p50_us));
  const double threshold = s.p50_us + 4.0 * s.robust_sd_us;

  std::vector<PeriodicStall> candidates;
  std::vector<double> folded;
  for (int period = 2; period <= s.n / 6; ++period) {
    for (int phase = 0; phase < period; ++phase) {
      folded.clear();
      int high = 0;
      for (int i = phase; i < s.n; i += period) {
        folded.push_back(gaps_us[static_cast<std::size_t>(i)]);
        high += gaps_us[static_cast<std::size_t>(i)] > threshold;
      }
      if (4 * high < 3 * static_cast<int>(folded.size())) continue;
      candidates.push_back({period, phase, static_cast<int>(folded.size()), st::median(folded) - s.p50_us});
    }
  }
  if (candidates.empty()) return s;
  const double best = std::max_element(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
                        return a.excess_us < b.excess_us;
                      })->excess_us;
  for (const auto& c : candidates) {  // ordered by period, then phase
    if (c.excess_us >= 0.8 * best) {
      s.stall = c;
      break;
    }
  }
  return s;
}

nlohmann::json to_json(const LatencySeriesSummary& s) {
  nlohmann::json j = {{"n", s.n}, {"p50_us", s.p50_us}, {"p99_us", s.p99_us}, {"max_us", s.max_us},
                      {"robust_sd_us", s.robust_sd_us}, {"periodic_stall", nullptr}};
  if (s.stall)
    j["periodic_stall"] = {{"period", s.stall->period}, {"phase", s.stall->phase},
                           {"occurrences", s.stall->occurrences}, {"excess_us", s.stall->excess_us}};
  return j;
}

}  // namespace atlas::suites
