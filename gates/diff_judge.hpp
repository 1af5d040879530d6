#pragma once
// The gate's judgement, for `atlas-bench diff`: one rule, two callers.
//
// A diff of two records judges B's metric against A's as the gate judges a record against a
// BASELINE made from A (gates/compare.hpp: judge_metric), with the gate config's tolerances
// (default_tolerance: the kind's default, or metric_tolerance's longest matching prefix), its
// equality metrics, alpha, noise estimate and minimum sample count. So `diff` cannot call a
// counted change "regressed" that the gate calls "same, within tolerance 1161", and a timed
// change the gate would need more samples for reads "undecided" in both.
#include <optional>

#include "gates/config.hpp"
#include "records/diff.hpp"

namespace atlas::gates {

struct DiffJudgeOverrides {
  std::optional<double> alpha;           ///< replaces the config's alpha (`diff --alpha`)
  std::optional<double> timed_relative;  ///< replaces every timed metric's relative tolerance (`diff --threshold-pct` / 100)
};

/// A records::MetricJudge applying `cfg`'s rules. The metric's A side stands in for the
/// baseline: value = median of A's samples, samples = A's samples.
/// Verdict -> change: regression -> regressed, improved -> improved, same -> unchanged,
/// needs-more-samples -> noise (printed "undecided"; diff exits 2 as the gate does).
records::MetricJudge diff_judge(const GateConfig& cfg, const DiffJudgeOverrides& overrides = {});

}  // namespace atlas::gates
