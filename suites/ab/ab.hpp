#pragma once
// A/B on one box: the same suite on two configurations (env settings or target options per
// side), interleaved A B A B ... so drift (thermal, other load) hits both sides alike, then per
// metric both medians, the ratio B/A and the paired judgement the gate uses too
// (records/paired_judgement.hpp: per round one value per side, Wilcoxon signed-rank interval of
// the change against a tolerance; "same" only when a change of the tolerance would have been
// seen, "undecided" otherwise), with optional adaptive rounds until decided, plus a greedy
// output-parity check over a prompt set. The result is an ordinary record.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "records/paired_judgement.hpp"
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
  SuiteOptions options;       ///< warmup: per side before round 1; repetitions: rounds (at least)
  SideSpec a, b;
  double tolerance = 0.03;    ///< relative change the timed judgement must resolve
  records::PairedSettings paired;
  int max_rounds = 0;         ///< > repetitions: more rounds (in AB pairs) until every timed metric is decided
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
  std::string verdict;          ///< timed: "b better", "b worse", "same", "undecided"; counted: "same", "differs"
  double p_value = 1;           ///< Wilcoxon signed-rank two-sided p over the rounds (timed metrics)
  int n_a = 0, n_b = 0;
  std::optional<records::PairedVerdict> paired;  ///< timed metrics: the judgement (interval, MDE, why)
};

struct AbResult {
  records::Record record;
  std::vector<MetricComparison> comparisons;
  ParityReport parity;
  int rounds = 0;            ///< rounds run (each side once per round)
  double tolerance = 0.03;
  double confidence = 0.99;
  /// The two targets, kept alive for the caller's provenance (EnvScopedTarget over the factory's).
  std::unique_ptr<EnvScopedTarget> target_a, target_b;
};

/// Merges a repetition's result into the side's accumulated result (samples appended in order).
void append_samples(records::SuiteResult& into, const records::SuiteResult& round);

/// Compares every metric present on both sides after `rounds` interleaved rounds. Timed metrics:
/// each side's samples are split into `rounds` equal consecutive groups (one per round), each
/// group's median is that round's value, and records::judge_paired decides (B is the head, A
/// the base); a metric whose sample counts do not split into rounds is "undecided". Counted and
/// accuracy metrics: "same" when the samples are equal, else "differs" (they are exact).
std::vector<MetricComparison> compare_sides(const records::SuiteResult& a, const records::SuiteResult& b, int rounds,
                                            double tolerance = 0.03, const records::PairedSettings& s = {});

/// Runs the suite interleaved and the parity check. The record: gate_or_suite "ab-<suite>",
/// suites "<suite>@a", "<suite>@b", "parity" (counted metric parity_mismatches), config.ab
/// (both side specs), verdicts (the comparisons). Throws SuiteError on a failing request.
AbResult run_ab(const AbRequest& request, const TargetFactory& make_target, Progress* progress = nullptr);

/// The comparison table: metric | unit | median A | median B | B/A | interval of the change | MDE | p | verdict.
Table ab_table(const AbResult& result);

}  // namespace atlas::suites
