#pragma once
// Per-metric verdicts: a record (candidate) against a BASELINE.
//
// Rules (docs/gates.md has the full text and sources):
// - counted metrics whose unit is a hash (records::is_identity_unit) are identities: any change fails.
// - counted and accuracy metrics are exact: candidate median worse than the baseline value by
//   more than the baseline's tolerance (0 unless set, e.g. 0.5% for callgrind instruction
//   counts) = regression, better by more = improved (CodSpeed/rustc-perf treat deterministic
//   counts this way).
// - timed metrics need BOTH a practical and a statistical difference (asv `compare`, Google
//   Benchmark compare.py U test, Pinpoint): the candidate median is worse than the baseline
//   value by more than margin = max(relative * |value|, absolute, noise), AND a two-sided
//   Mann-Whitney U test of candidate samples vs baseline samples gives p < alpha (0.01) with
//   the rank sum on the worse side. Worse beyond the margin but not significant = needs more
//   samples (Pinpoint's UNKNOWN): the gate reruns, then answers inconclusive.
// - noise = the larger half-width of the bootstrap percentile CI (Efron) of the median of the
//   baseline samples and of the candidate samples (confidence 0.95, 2000 resamples, seed 42):
//   how far the medians move from resampling alone on this box.
// - fewer than min_samples candidate samples -> needs more samples; identical sample sets ->
//   same; a baseline with < 2 samples is compared on the margin alone (asv does the same for
//   single-repeat results).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/exit_code.hpp"
#include "gates/baseline.hpp"
#include "records/record.hpp"

namespace atlas::gates {

struct GateConfig;

struct CompareSettings {
  int min_samples = 5;
  double alpha = 0.01;
  double noise_confidence = 0.95;
  int noise_resamples = 2000;
  /// Counted metrics judged on equality, by a segment of their key ("graph_launches_per_token"
  /// matches "decode-anatomy/eager/graph_launches_per_token/qkv"): their expected value is exact,
  /// so a change either way is a regression, never "improved" (0 graph launches per token means
  /// graph capture was lost, not that decode got better).
  std::vector<std::string> equality_segments;
};
/// Whether `key` has a '/'-separated segment in `segments`.
bool matches_segment(const std::string& key, const std::vector<std::string>& segments);
CompareSettings compare_settings(const GateConfig& c);

enum class VerdictStatus {
  same,                ///< no change beyond the margin (or not significant)
  improved,            ///< better: exact metrics by any amount, timed beyond margin and significant
  regression,          ///< worse: exact metrics by any amount, timed beyond margin and significant
  needs_more_samples,  ///< too few samples, or worse beyond margin but not yet significant
  new_metric,          ///< in the record, not in the baseline: reported, not gated
  missing,             ///< in the baseline, absent from the record: a gate lost (fails)
  incomparable,        ///< unit/kind/direction differ from the baseline (fails)
};
const char* to_string(VerdictStatus s);

struct Verdict {
  std::string key;  ///< "<suite>/<metric>"
  std::string unit;
  records::Better better = records::Better::lower;
  records::MetricKind kind = records::MetricKind::timed;
  VerdictStatus status = VerdictStatus::same;
  std::string rule;                        ///< "exact" | "mann-whitney-u" | "margin-only" | "identical-samples" | "min-samples" | "none"
  std::optional<double> baseline_value;    ///< baseline `value`
  std::optional<double> candidate_value;   ///< median of the candidate samples
  std::optional<double> delta_pct;         ///< 100 * (candidate - baseline) / |baseline|
  std::optional<double> margin;            ///< max(tolerance, noise), in the metric's unit
  std::optional<double> noise;             ///< see header comment, in the metric's unit
  std::optional<double> p_value;           ///< Mann-Whitney U, two-sided
  int baseline_n = 0, candidate_n = 0;     ///< sample counts
  std::string why;                         ///< one sentence a reviewer can act on
};

enum class Overall { pass, regression, inconclusive };
const char* to_string(Overall o);
/// pass -> 0, regression -> 1, inconclusive -> 2.
ExitCode exit_code(Overall o);

struct Comparison {
  std::vector<Verdict> verdicts;  ///< sorted by key
  Overall overall = Overall::pass;
};

/// Judges one metric. Either pointer may be null (new or missing metric), not both.
Verdict judge_metric(const std::string& key, const BaselineMetric* baseline, const records::Metric* candidate,
                     const CompareSettings& s);

/// Judges every metric of the baseline and of the record.
Comparison compare(const Baseline& baseline, const records::Record& candidate, const CompareSettings& s);

/// Regression (or missing/incomparable) anywhere -> regression; else any needs-more-samples ->
/// inconclusive; else pass.
Overall overall_of(const std::vector<Verdict>& verdicts);

/// Measured noise of one sample set: half-width of its bootstrap CI of the median (0 for < 2).
double median_ci_half_width(const std::vector<double>& samples, const CompareSettings& s);

/// The metrics that make `verdicts` fail or inconclusive, by verdict: "regression:
/// instructions/instructions_per_decode_token (+5.06%); missing: a/b; needs-more-samples: c"
/// (at most `max_named` keys per verdict, then "and N more"); "" when none.
std::string failing_metrics(const std::vector<Verdict>& verdicts, std::size_t max_named = 5);

/// Candidate value of a metric as gates use it: the median of its samples.
double candidate_value(const records::Metric& m);

/// A record metric by key, or null.
const records::Metric* find_metric(const records::Record& r, const std::string& key);

nlohmann::json to_json(const Verdict& v);
nlohmann::json to_json(const Comparison& c);

}  // namespace atlas::gates
