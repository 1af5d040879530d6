#pragma once
// Small builders for gate tests: records and baselines with chosen samples.
#include <string>
#include <vector>

#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "records/record.hpp"

namespace atlas::test {

inline records::Metric metric(std::vector<double> samples, records::MetricKind kind = records::MetricKind::timed,
                              records::Better better = records::Better::lower, std::string unit = "ms") {
  records::Metric m;
  m.samples = std::move(samples);
  m.kind = kind;
  m.better = better;
  m.unit = std::move(unit);
  return m;
}

inline records::Record record_with(const std::string& suite, const std::string& name, const records::Metric& m) {
  records::Record r;
  r.git.commit = "c0ffee0000000000000000000000000000000000";
  r.machine.machine_class = "cpu-test";
  r.suites[suite].name = suite;
  r.suites[suite].metrics[name] = m;
  return r;
}

inline gates::BaselineMetric baseline_metric(double value, std::vector<double> samples,
                                             records::MetricKind kind = records::MetricKind::timed,
                                             records::Better better = records::Better::lower,
                                             gates::Tolerance tol = {0.05, 0}, std::string unit = "ms") {
  gates::BaselineMetric b;
  b.value = value;
  b.samples = std::move(samples);
  b.kind = kind;
  b.better = better;
  b.tolerance = tol;
  b.unit = std::move(unit);
  return b;
}

inline gates::Baseline baseline_with(const std::string& key, const gates::BaselineMetric& m) {
  gates::Baseline b;
  b.gate = "pr";
  b.machine_class = "cpu-test";
  b.metrics[key] = m;
  return b;
}

/// n samples around `center`: center + spread * (i - (n-1)/2) / n, i.e. evenly spread.
inline std::vector<double> spread(double center, double width, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(center + width * (i - (n - 1) / 2.0) / n);
  return out;
}

inline gates::GateConfig test_config() {
  gates::GateConfig c;
  c.gate = "pr";
  c.suites = {"ttft", "decode-anatomy"};
  c.min_samples = 5;
  c.rerun_cap = 2;
  return c;
}

}  // namespace atlas::test
