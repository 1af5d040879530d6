#include "records/summary.hpp"

#include <algorithm>
#include <cmath>

#include "records/stats.hpp"

namespace atlas::records {

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.n = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  s.p50 = stats::median(samples);  // validates: no NaN below this line
  const auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  s.min = *mn;
  s.max = *mx;
  s.mean = stats::mean(samples);
  s.p90 = stats::percentile(samples, 90);
  s.p99 = stats::percentile(samples, 99);
  s.stdev = stats::stdev(samples);
  const auto ci = stats::bootstrap_median_ci(samples);
  s.ci95_lo = ci.lo;
  s.ci95_hi = ci.hi;
  return s;
}

nlohmann::json to_json(const Summary& s) {
  auto num = [](double v) -> nlohmann::json { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"n", s.n},           {"min", num(s.min)},     {"p50", num(s.p50)},
          {"mean", num(s.mean)}, {"p90", num(s.p90)},     {"p99", num(s.p99)},
          {"max", num(s.max)},   {"stdev", num(s.stdev)}, {"ci95_lo", num(s.ci95_lo)},
          {"ci95_hi", num(s.ci95_hi)}};
}

}  // namespace atlas::records
