#pragma once
// Comparing two records metric by metric (`atlas-bench diff A B`).
//
// Timed metrics follow asv compare and Google Benchmark's compare.py: a change is real only when
// it is both large (|Δ| of the medians >= threshold_pct, asv's --factor) and statistically
// significant (two-sided Mann–Whitney U p < alpha, compare.py's --alpha). Large but not
// significant is "noise" (asv's '~'). With fewer than 2 samples on a side no test is possible
// and, as asv does for single-repeat results, the threshold alone decides.
// Counted and accuracy metrics are deterministic and compare exactly: any change of the median
// is improved or regressed.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_code.hpp"
#include "records/metric.hpp"
#include "records/record.hpp"

namespace atlas::records {

/// improved/regressed: a real change in the better/worse direction; changed: an identity metric
/// (is_identity_unit: a hash) differs, which has no better direction; unchanged: below the
/// threshold (or equal, for exact metrics); noise: large but not significant; added/removed:
/// present only in B / only in A; incomparable: unit or kind differs between A and B (asv's 'x').
enum class Change { improved, regressed, changed, unchanged, noise, added, removed, incomparable };
const char* to_string(Change c);

/// What a judge says about one metric both sides have (see DiffOptions::judge).
struct MetricJudgement {
  Change change = Change::unchanged;  ///< improved, regressed, unchanged or noise (undecided)
  std::string rule;                   ///< the judge's rule name, e.g. "exact-tolerance", "mann-whitney-u"
  std::string why;                    ///< one sentence: the values, the tolerance or margin, the test
  std::optional<double> p_value;
};
/// Judges B's metric against A's; std::nullopt leaves the metric to the built-in rule below.
using MetricJudge =
    std::function<std::optional<MetricJudgement>(const std::string& suite, const std::string& metric, const Metric& a,
                                                  const Metric& b)>;

struct DiffOptions {
  double alpha = 0.05;         ///< significance level of the U test (Google Benchmark compare.py default)
  double threshold_pct = 5.0;  ///< minimum |Δ%| of the medians for a timed change to count
  /// When set, decides every metric both sides have except identities and incomparable pairs:
  /// `atlas-bench diff` passes the gate's own judgement (gates/diff_judge.hpp), so diff and
  /// gate never disagree about one change. Unset, the asv-style rule above applies.
  MetricJudge judge;
  std::string rule_text;  ///< names the judge for the summary line, e.g. "the pr gate's rules"
};

struct MetricDiff {
  std::string suite, metric, unit;
  Better better = Better::lower;
  MetricKind kind = MetricKind::timed;
  int n_a = 0, n_b = 0;   ///< sample counts (0 on the side where the metric is absent)
  double p50_a = 0, p50_b = 0;  ///< NaN where absent or without samples
  double delta_pct = 0;   ///< 100·(p50_b - p50_a)/|p50_a|; NaN when undefined (absent, p50_a = 0 ≠ p50_b, a hash)
  double p_value = 0;     ///< two-sided U-test p (timed metrics with >= 2 samples per side), else NaN
  std::string test;       ///< "exact" | "asymptotic" | "identical" | "none" (no test) | "exact-compare"
  bool significant = false;
  Change change = Change::unchanged;
  /// Identity metrics only: a side whose samples disagree (its runs produced different outputs;
  /// its p50 is NaN and printers say "mixed").
  bool mixed_a = false, mixed_b = false;
  std::string why;  ///< the judge's reason (empty for the built-in rule's unchanged rows)
  /// Timed rows only: which side's box was not known to be quiet ("A: box not quiet"), since a
  /// timed change measured under load may be the load. Empty when both were quiet.
  std::string caveat;
};

/// Identifies one side of a diff in printed output.
struct DiffSide {
  std::string label;  ///< file path or argument as given
  std::string commit, branch, machine_class, gate_or_suite, start_utc;
  bool dirty = false;
  bool valid = true;
};

struct RecordDiff {
  DiffSide a, b;
  DiffOptions options;
  std::vector<MetricDiff> metrics;  ///< sorted by (suite, metric), numbers in names by value (natural_less)
  /// Caveats a reader needs before trusting the table: a side made with a test hook, a side
  /// whose box was never quiet-checked, both sides the same record.
  std::vector<std::string> warnings;
  /// Counts of each Change, for summaries.
  int count(Change c) const;
};

/// The exit code one row leads to (README, "Exit codes"): regressed, changed (an output
/// fingerprint) and incomparable (unit or kind changed: the gate's incomparable, a regression)
/// are 1; undecided (noise) is 2; unchanged, improved, added and removed are 0.
ExitCode exit_code_of(Change c);
/// The diff's exit code: the worst of its rows' (1 before 2 before 0).
ExitCode exit_code(const RecordDiff& d);

/// Why a record's box cannot be trusted for timing: "its quiet-box check said not quiet (...)",
/// "judged with --allow-noisy", "not quiet-box checked"; "" when its check said quiet.
std::string box_caveat(const Record& r);

/// Compares every metric present in either record (A = baseline, B = candidate).
RecordDiff diff_records(const Record& a, const Record& b, const DiffOptions& options = {},
                        const std::string& label_a = "A", const std::string& label_b = "B");

/// Compares one metric present in both records.
MetricDiff diff_metric(const std::string& suite, const std::string& name, const Metric& a, const Metric& b,
                       const DiffOptions& options);

}  // namespace atlas::records
