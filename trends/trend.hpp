#pragma once
// What moved in each line: the steps of every metric's history and the drift since the last
// reviewed move of its BASELINE, judged by the gate's own rule.
//
// Steps: a timed metric's steps are its change points (change_points.hpp: E-divisive means
// over the commits' medians); a counted or accuracy metric is exact, so every commit whose
// median differs from the one before is a step (confidence 1); an identity metric (a hash) has
// a step wherever its value changes, with no size.
//
// Drift: a slow drift passes every pull request (each step within its tolerance) and is a
// regression all the same. The level now (every sample of the newest `level_window` commits
// after the last step, pooled) is judged as the gate judges a record (gates::judge_metric with
// the gate config's compare settings) against:
//  - the BASELINE's metric when the line's (machine class, gate) has one: its value, samples
//    and tolerance, as moved by its last ratchet, accept or init (an accept of a step is that
//    entry, so an accepted step stops failing); commits before that entry's commit are not the
//    level now;
//  - else the level of the history's start (the oldest `level_window` commits before its first
//    step, pooled) with the config's default tolerance for the metric (gates::default_tolerance).
// A regression there is a drift; identity metrics are not judged here (the gate fails any
// change of them at once).
#include <optional>
#include <string>
#include <vector>

#include "gates/compare.hpp"
#include "trends/change_points.hpp"
#include "trends/history.hpp"

namespace atlas::trends {

struct Step {
  std::size_t from = 0, to = 0;  ///< commit indexes: the last of the old level and the first of the new
  double before = 0, after = 0;  ///< median of the commits' medians of the neighbouring segments
  double delta_pct = 0;          ///< 100 * (after - before) / |before|; NaN for an identity or before = 0
  double confidence = 1;         ///< 1 - p of the permutation test; 1 for exact metrics
  bool worse = false;            ///< in the metric's worse direction (an identity change is worse)
};

struct Drift {
  std::string reference;   ///< "BASELINE <value> (accept at <commit12>)" or "the history's start (<n> commits)"
  std::string since;       ///< the commit the level now is counted from ("" = the whole history)
  std::size_t level_commits = 0;  ///< commits pooled into the level now
  gates::Verdict verdict;  ///< the gate's judgement of the level now against the reference
  bool regression() const { return verdict.status == gates::VerdictStatus::regression; }
};

struct SeriesTrend {
  std::string key;
  std::vector<Step> steps;
  std::optional<Drift> drift;        ///< absent: not judged (identity, too few commits, nothing since the BASELINE moved)
  std::string not_judged;            ///< why drift is absent
  std::optional<double> baseline;    ///< the BASELINE value, when the line has one for this metric
  double moved_pct = 0;              ///< newest vs oldest commit of the last `moved_window` commits, NaN when undefined
};

struct LineTrend {
  std::size_t line = 0;  ///< index into History::lines
  std::vector<SeriesTrend> series;  ///< by metric key
};

struct TrendSettings {
  ChangePointSettings change_points;
  int level_window = 10;  ///< commits pooled into a level
  int moved_window = 20;  ///< commits the "moved most" figure spans
};

/// The trends of every line of `h`; `config_for` and `baselines_dir` as in HistoryOptions.
std::vector<LineTrend> analyse(const History& h, const HistoryOptions& o, const TrendSettings& s = {});

/// Steps of one series (see above), over the line's commits.
std::vector<Step> find_steps(const Series& s, const ChangePointSettings& settings);

}  // namespace atlas::trends
