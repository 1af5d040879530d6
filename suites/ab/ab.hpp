#pragma once
// A/B on one box: the same suite on two configurations (env settings or target options per
// side), interleaved A B A B ... so drift (thermal, other load) hits both sides alike, then per
// metric both medians, the ratio B/A and a Mann–Whitney verdict (records/stats.hpp), plus a
// greedy output-parity check over a prompt set. The result is an ordinary record.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "records/record.hpp"
#include "suites/ab/parity.hpp"
#include "suites/ab/side_spec.hpp"
#include "suites/suite_options.hpp"
#include "suites/table.hpp"
#include "suites/target.hpp"

namespace atlas::suites {

/// Builds a side's target; called with the side's environment already applied.
using TargetFactory = std::function<std::unique_ptr<Target>(const SideSpec&)>;

struct AbRequest {
  std::string suite;          ///< a registry name
  SuiteOptions options;       ///< warmup: per side before round 1; repetitions: rounds
  SideSpec a, b;
  bool parity = true;
  ParityConfig parity_config;
};

struct MetricComparison {
  std::string metric;
  std::string unit;
  records::Better better = records::Better::lower;
  records::MetricKind kind = records::MetricKind::timed;
  double median_a = 0, median_b = 0;
  double ratio = 0;             ///< median_b / median_a (0 when median_a is 0)
  std::string verdict;          ///< "b better", "b worse", "same", "inconclusive", "differs" (counted)
  double p_value = 1;           ///< Mann–Whitney two-sided p (timed metrics)
  int n_a = 0, n_b = 0;
};

struct AbResult {
  records::Record record;
  std::vector<MetricComparison> comparisons;
  ParityReport parity;
  /// The two targets, kept alive for the caller's provenance (EnvScopedTarget over the factory's).
  std::unique_ptr<EnvScopedTarget> target_a, target_b;
};

/// Merges a repetition's result into the side's accumulated result (samples appended in order).
void append_samples(records::SuiteResult& into, const records::SuiteResult& round);

/// Compares every metric present on both sides. Timed metrics: Mann–Whitney U, significant
/// at p < alpha; verdict by the metric's direction. Counted/accuracy metrics: "same" when the
/// medians are equal, else "differs" (they are exact).
std::vector<MetricComparison> compare_sides(const records::SuiteResult& a, const records::SuiteResult& b,
                                            double alpha = 0.05);

/// Runs the suite interleaved and the parity check. The record: gate_or_suite "ab-<suite>",
/// suites "<suite>@a", "<suite>@b", "parity" (counted metric parity_mismatches), config.ab
/// (both side specs), verdicts (the comparisons). Throws SuiteError on a failing request.
AbResult run_ab(const AbRequest& request, const TargetFactory& make_target, Progress* progress = nullptr);

/// The comparison table: metric | unit | median A | median B | B/A | p | verdict.
Table ab_table(const AbResult& result);

}  // namespace atlas::suites
