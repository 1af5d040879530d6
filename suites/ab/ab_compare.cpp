#include <cmath>

#include "records/stats.hpp"
#include "suites/ab/ab.hpp"

namespace atlas::suites {
namespace {

/// Per-round values: the median of each of `rounds` equal consecutive groups; empty when the
/// samples do not split evenly.
std::vector<double> round_values(const std::vector<double>& samples, int rounds) {
  if (rounds <= 0 || samples.empty() || samples.size() % static_cast<std::size_t>(rounds) != 0) return {};
  const std::size_t k = samples.size() / static_cast<std::size_t>(rounds);
  std::vector<double> out;
  for (std::size_t i = 0; i < samples.size(); i += k)
    out.push_back(records::stats::median(std::span<const double>(samples.data() + i, k)));
  return out;
}

bool positive(const std::vector<double>& v) {
  for (double x : v)
    if (!(x > 0) || !std::isfinite(x)) return false;
  return true;
}

}  // namespace

std::vector<MetricComparison> compare_sides(const records::SuiteResult& a, const records::SuiteResult& b, int rounds,
                                            double tolerance, const records::PairedSettings& s) {
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
      c.verdict = "undecided";
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
    const auto va = round_values(ma.samples, rounds), vb = round_values(mb.samples, rounds);
    if (va.empty() || vb.empty() || !positive(va) || !positive(vb)) {
      c.verdict = "undecided";
      out.push_back(c);
      continue;
    }
    const records::PairedVerdict v = records::judge_paired(va, vb, ma.better, tolerance, s);
    c.p_value = v.p_value;
    c.paired = v;
    switch (v.status) {
      case records::PairedStatus::regression: c.verdict = "b worse"; break;
      case records::PairedStatus::improved: c.verdict = "b better"; break;
      case records::PairedStatus::same: c.verdict = "same"; break;
      case records::PairedStatus::undecided: c.verdict = "undecided"; break;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace atlas::suites
