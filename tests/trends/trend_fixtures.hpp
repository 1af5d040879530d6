#pragma once
// Generated metric histories with the noise of real records, and stores of records made from
// them, for the trends tests.
//
// The noise of a quiet machine class (timed trends come only from one): each run's level moves
// by 0.5 % (log-normal, sd 0.005: the run-to-run spread docs/PERF.md measured on the H200
// machine), one run in 30 is still slowed by 3-10 % (a neighbour, a cron job), and each run's 10
// samples spread by 2 % around its level (log-normal). A commit's point is the median of its
// samples, as the report computes it.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gates/baseline.hpp"
#include "records/record.hpp"
#include "records/store.hpp"

namespace atlas::test {

/// Uniform (0, 1) and standard normal variates from raw mt19937_64 output (fixed by the standard).
inline double unit_uniform(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; }
inline double standard_normal(std::mt19937_64& rng) {
  const double u1 = unit_uniform(rng), u2 = unit_uniform(rng);
  return std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// One commit's samples at `level` (see the header comment).
inline std::vector<double> run_samples(std::mt19937_64& rng, double level, int n = 10) {
  double run = level * std::exp(0.005 * standard_normal(rng));
  if (unit_uniform(rng) < 1.0 / 30) run *= 1.03 + 0.07 * unit_uniform(rng);
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(run * std::exp(0.02 * standard_normal(rng)));
  return out;
}

/// Samples of `commits` commits at `base`, multiplied by (1 + step) at each index of `steps`.
inline std::vector<std::vector<double>> history_samples(std::mt19937_64& rng, int commits, double base,
                                                        const std::vector<int>& steps = {}, double step = 0) {
  std::vector<std::vector<double>> out;
  double level = base;
  for (int i = 0; i < commits; ++i) {
    for (const int s : steps)
      if (s == i) level *= 1 + step;
    out.push_back(run_samples(rng, level));
  }
  return out;
}

/// A 40-hex-digit sha for commit i of a generated history.
inline std::string fake_sha(int i, char tag = 'a') {
  char buf[41];
  std::snprintf(buf, sizeof buf, "%c%06d%033d", tag, i, 0);  // the index in the first 7 digits
  return buf;
}

/// "2026-01-01T00:MM:SSZ"-style start time, i minutes after 2026-01-01 00:00 (before any now).
inline std::string start_utc(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "2026-01-%02dT%02d:%02d:00Z", 1 + i / 1440, (i / 60) % 24, i % 60);
  return buf;
}

/// A gate record of commit `sha` with one timed metric (decode-anatomy/us_per_token, µs,
/// lower is better) and one counted metric (instructions/per_token).
inline records::Record trend_record(const std::string& sha, int minute, const std::vector<double>& timed,
                                    double counted = 1000, const std::string& machine_class = "cpu-test",
                                    const std::string& cpu = "Test CPU") {
  records::Record r;
  r.run_id = "run-" + sha.substr(0, 8) + "-" + std::to_string(minute);
  r.start_utc = r.end_utc = start_utc(minute);
  r.gate_or_suite = "nightly";
  r.git.commit = sha;
  r.machine.machine_class = machine_class;
  r.machine.cpu_model = cpu;
  r.machine.cores = 2;
  r.model.path = "models/m.bin";
  r.model.format = "llama2c";
  r.model.sha256 = std::string(64, 'f');
  auto& d = r.suites["decode-anatomy"];
  d.name = "decode-anatomy";
  records::Metric t;
  t.unit = "us";
  t.samples = timed;
  d.metrics["us_per_token"] = t;
  auto& c = r.suites["instructions"];
  c.name = "instructions";
  records::Metric m;
  m.unit = "count";
  m.kind = records::MetricKind::counted;
  m.samples = {counted};
  c.metrics["per_token"] = m;
  r.quiet_box = {{"before", {{"quiet", true}}}};
  return r;
}

}  // namespace atlas::test
