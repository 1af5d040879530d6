#pragma once
// The "timed" section of a gate config: how the gate judges timed metrics against the
// merge-base build, interleaved on this box (gates/interleaved.hpp), and which machine classes
// are quiet enough for timed values in stored BASELINE files. Schema in docs/gates.md.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/interleaved.hpp"
#include "gates/json_fields.hpp"
#include "records/stopping_rule.hpp"

namespace atlas::gates {

struct TimedJudgementConfig {
  bool enabled = false;                      ///< the section is present
  std::string suite_config = "gate-timed";   ///< suite-set config both sides run (name or path)
  std::vector<std::string> suites;           ///< suites both sides run each round
  std::vector<TimedMetric> metrics;          ///< gated metrics and their relative tolerances
  int threads = 1;                           ///< CPU threads per side (1: a side has its own core on 2 cores)
  /// When the data are looked at (judged rounds), each look at confidence 1 − (1 − confidence)/K
  /// (records::GroupSequential); the first must be at least the exact test's minimum at that level.
  std::vector<int> looks = {12, 24, 40, 60, 80};
  int min_rounds = 12;                       ///< = looks.front()
  int max_rounds = 80;                       ///< rounds run, disturbed ones included (default: the last look)
  double time_cap_s = 120;                   ///< for the interleaved rounds (the merge-base build is extra)
  records::PairedSettings paired;
  double max_wait_share = 0.05;  ///< a side that waited for a CPU more than this share of its run: round disturbed
  double max_wait_gap = 0.03;    ///< the two sides' wait shares differ by more than this: round disturbed
  double max_disturbed_share = 0.25;  ///< an undecided metric with more rounds disturbed than this: "inconclusive: load"
};

/// Parses the section at `path` of a gate config; throws GateError naming the field and value.
TimedJudgementConfig parse_timed_config(const FieldReader& r, const nlohmann::json& j, const std::string& path);
nlohmann::json to_json(const TimedJudgementConfig& c);

/// The interleaving settings of a config.
InterleavedSettings interleaved_settings(const TimedJudgementConfig& c);

/// The stopping rule of a config: group-sequential over `looks`, the gate's question.
records::GroupSequential stopping_rule(const TimedJudgementConfig& c);

}  // namespace atlas::gates
