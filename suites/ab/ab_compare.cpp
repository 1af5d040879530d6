#include <cmath>

#include "records/stats.hpp"
#include "suites/ab/ab.hpp"

namespace atlas::suites {

std::vector<MetricComparison> compare_sides(const records::SuiteResult& a, const records::SuiteResult& b, double alpha) {
  std::vector<MetricComparison> out;
  for (const auto& [name, ma] : a.metrics) {
    auto it = b.metrics.find(name);
    if (it == b.metrics.end()) continue;
    const records::Metric& mb = it->second;
    MetricComparison c;
    c.metric = name;
    c.unit = ma.unit;
    c.better = ma.better;
    c.kind = ma.kind;
    c.n_a = static_cast<int>(ma.samples.size());
    c.n_b = static_cast<int>(mb.samples.size());
    if (ma.samples.empty() || mb.samples.empty()) {
      c.verdict = "inconclusive";
      out.push_back(c);
      continue;
    }
    c.median_a = records::stats::median(ma.samples);
    c.median_b = records::stats::median(mb.samples);
    c.ratio = c.median_a != 0 ? c.median_b / c.median_a : 0.0;
    if (ma.kind != records::MetricKind::timed) {
      // Counted and accuracy metrics are exact: any difference is real.
      c.p_value = ma.samples == mb.samples ? 1.0 : 0.0;
      c.verdict = c.median_a == c.median_b && ma.samples == mb.samples ? "same" : "differs";
      out.push_back(c);
      continue;
    }
    const auto mw = records::stats::mann_whitney_u(ma.samples, mb.samples);
    c.p_value = mw.p_value;
    if (mw.p_value >= alpha) {
      c.verdict = "same";
    } else {
      const bool b_lower = c.median_b < c.median_a;
      const bool b_better = (ma.better == records::Better::lower) == b_lower;
      c.verdict = c.median_a == c.median_b ? "differs" : (b_better ? "b better" : "b worse");
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace atlas::suites
