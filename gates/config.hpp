#pragma once
// Gate configuration (gates/config/<gate>.json): which suites a gate runs, the statistical rule
// settings, default tolerances per metric kind, the rerun cap, quiet-box thresholds and the
// branch the merge-base check compares against. Schema in docs/gates.md.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/baseline.hpp"
#include "gates/timed_config.hpp"

namespace atlas::gates {

/// When the box counts as quiet (quiet_box.hpp). Defaults follow pyperf's advice (idle box,
/// runnable threads << cores) and nvbench's throttle handling (drop samples under slowdown).
struct QuietBoxThresholds {
  double max_load_per_core = 0.5;                ///< 1-minute load average / online cores
  double max_foreign_process_cpu_percent = 20;   ///< busiest foreign process, % of one core
  int sample_window_ms = 500;                    ///< /proc/<pid>/stat delta window
  double max_gpu_utilization_percent = 5;        ///< before the run (NVML utilization.gpu)
  double max_gpu_temperature_c = 85;
  bool allow_foreign_gpu_processes = false;
  /// Clocks-event reasons that invalidate samples taken while they are active
  /// (names from decode_clocks_event_reasons()).
  std::vector<std::string> slowdown_reasons = {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown",
                                               "hw_thermal_slowdown", "hw_power_brake_slowdown"};
  int monitor_interval_ms = 100;                 ///< background NVML sampling period
  /// Before judging, wait up to this many seconds for the box to become quiet (a build that
  /// just finished leaves the 1-minute load average high for a minute or two). 0 = no wait.
  int settle_max_s = 150;
};

struct GateConfig {
  std::string gate;                   ///< "pr", "nightly"
  std::vector<std::string> suites;    ///< suite names as records store them ("ttft", "decode-anatomy", ...)
  /// The suites' own configuration: a suite-set config name ("pr" -> suites/config/pr.json) or
  /// a path, passed to the suites library. Default: the gate's name.
  std::string suite_config;
  int min_samples = 5;                ///< fewer candidate samples -> needs more samples
  int rerun_cap = 3;                  ///< extra attempts for metrics that need more samples
  /// A timed regression must reproduce in one fresh run of its suites (judged alone) to stand;
  /// one that does not becomes "needs more samples" (inconclusive). Drift between runs on a
  /// shared box is invisible to a noise estimate taken from one run's samples.
  bool confirm_timed_regressions = true;
  double alpha = 0.01;                ///< Mann-Whitney U significance level
  double noise_confidence = 0.95;     ///< bootstrap CI level for the noise estimate
  int noise_resamples = 2000;
  Tolerance timed_tolerance{0.05, 0};     ///< default for new timed metrics (baseline init)
  Tolerance counted_tolerance{0, 0};
  Tolerance accuracy_tolerance{0, 0};
  /// Per-metric defaults that win over the kind's: metric-key prefix ("instructions/" or a
  /// whole key) -> tolerance; the longest matching prefix applies. E.g. callgrind counts are
  /// deterministic but move by a few hundredths of a percent with the environment's size.
  std::map<std::string, Tolerance> metric_tolerance;
  /// Counted metrics judged on equality (CompareSettings::equality_segments): a segment of the
  /// metric key, e.g. "graph_launches_per_token".
  std::vector<std::string> equality_metrics;
  /// The merge-base's target when neither --target-branch nor the CI names one; honoured only
  /// from the merge-base's copy of this file (runs/judge_inputs.hpp), never from the PR's.
  std::string target_branch = "origin/main";
  QuietBoxThresholds quiet_box;
  /// Timed metrics judged against the merge-base build, interleaved (gates/interleaved.hpp).
  TimedJudgementConfig timed;
  /// Machine classes quiet enough (dedicated, idle) for timed values in stored BASELINE files to
  /// be gated; on every other class stored timed values are shown but not gated.
  std::vector<std::string> quiet_machine_classes;
};

/// Whether stored timed values are gated (and kept, ratcheted) on `machine_class`: always when
/// the config has no "timed" section, else only on its quiet_machine_classes.
bool timed_baselines_gated(const GateConfig& c, const std::string& machine_class);

/// The default tolerance for a metric kind.
Tolerance default_tolerance(const GateConfig& c, records::MetricKind kind);
/// The default tolerance for metric `key` (suite/metric): metric_tolerance's longest matching
/// prefix, else the kind's.
Tolerance default_tolerance(const GateConfig& c, records::MetricKind kind, const std::string& key);

/// Validates every field; unknown keys are errors too (a misspelt threshold must not silently
/// fall back to a default). Throws GateError naming source, field and value.
/// Where the config of `gate` lives: `explicit_path` when given, else gates/config/<gate>.json
/// relative to the working directory when it exists there, else under `source_dir` (the
/// checkout atlas-bench was built from).
std::filesystem::path gate_config_path(const std::string& gate, const std::string& explicit_path,
                                       const std::filesystem::path& source_dir);

GateConfig parse_gate_config(const nlohmann::json& j, const std::string& source);
GateConfig load_gate_config(const std::filesystem::path& path);
nlohmann::json to_json(const GateConfig& c);

}  // namespace atlas::gates
