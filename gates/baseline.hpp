#pragma once
// BASELINE files: the committed reference a gate judges records against.
//
// Path: baselines/<machine-class>/<gate>.BASELINE.json. Schema (docs/gates.md):
//   {schema_version: 1, gate, machine_class, frozen,
//    metrics: {"<suite>/<metric>": {value, unit, better: lower|higher,
//              kind: timed|counted|accuracy, tolerance: {relative, absolute}, frozen,
//              samples: [...], history: [{commit, date, old, new, reason,
//              action: ratchet|accept|freeze|unfreeze|init}]}},
//    history: [...]}   // file-level events (freeze/unfreeze of the file, metric removal)
// Ratchet semantics follow Betterer (.betterer.results): the file only tightens unless an
// explicit, reviewed `accept` entry records why it loosened (checked by merge_base_check).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/metric.hpp"

namespace atlas::gates {

inline constexpr int kBaselineSchemaVersion = 1;

/// Allowed worsening before a timed metric can regress: max(relative * |value|, absolute),
/// in the metric's unit. Counted and accuracy metrics ignore tolerances (exact gates).
struct Tolerance {
  double relative = 0;  ///< fraction of the baseline value, e.g. 0.05 = 5 %
  double absolute = 0;  ///< floor in the metric's unit (keeps tiny values from flapping)
};

enum class HistoryAction { ratchet, accept, freeze, unfreeze, init, remove };
const char* to_string(HistoryAction a);

/// One field an accept entry moved, from `from` to `to`. The merge-base check licenses a change
/// only when an entry names it exactly: an entry is evidence of what was reviewed, so an accept
/// of a value cannot stand in for a tolerance or a unit nobody looked at.
template <class T>
struct FieldChange {
  T from{};
  T to{};
};

bool operator==(const Tolerance& a, const Tolerance& b);

struct HistoryEntry {
  std::string commit;               ///< commit of the record that caused the change
  std::string date;                 ///< ISO-8601 UTC
  std::optional<double> old_value;  ///< null for init
  std::optional<double> new_value;  ///< null for remove
  std::string reason;
  HistoryAction action = HistoryAction::init;
  std::string metric;               ///< file-level entries only: the metric concerned, if any
  /// Accept entries: what else moved besides the value (absent when it did not). JSON:
  /// "tolerance": {"from": {relative, absolute}, "to": {...}}, "unit"/"kind"/"better":
  /// {"from": "...", "to": "..."}.
  std::optional<FieldChange<Tolerance>> tolerance{};
  std::optional<FieldChange<std::string>> unit{};
  std::optional<FieldChange<std::string>> kind{};
  std::optional<FieldChange<std::string>> better{};
};

struct BaselineMetric {
  double value = 0;  ///< the gated number (median of `samples` when set from a record)
  std::string unit;
  records::Better better = records::Better::lower;
  records::MetricKind kind = records::MetricKind::timed;
  Tolerance tolerance;
  bool frozen = false;
  std::vector<double> samples;  ///< raw samples behind `value` (Mann-Whitney U and noise)
  std::vector<HistoryEntry> history;
};

struct Baseline {
  int schema_version = kBaselineSchemaVersion;
  std::string gate;           ///< "pr", "nightly"
  std::string machine_class;  ///< records::MachineInfo::machine_class
  bool frozen = false;        ///< a frozen file never moves (ratchet/accept refuse)
  std::map<std::string, BaselineMetric> metrics;  ///< "<suite>/<metric>" -> metric
  std::vector<HistoryEntry> history;              ///< file-level events
  /// What the metrics were measured on (gates/identity.hpp): {"model": {path, format, sha256},
  /// "suites": {"<suite>": the suite's config}}; null in files made before it existed (then
  /// nothing is checked).
  nlohmann::json identity = nullptr;
};

/// "<suite>/<metric>".
std::string metric_key(const std::string& suite, const std::string& metric);
/// Splits a key at its first '/'; throws GateError when there is none.
std::pair<std::string, std::string> split_metric_key(const std::string& key);

/// baselines_dir/<machine_class>/<gate>.BASELINE.json. Throws GateError when either name is not
/// a plain file name (letters, digits, '.', '_', '-'; not "." or "..").
std::filesystem::path baseline_path(const std::filesystem::path& baselines_dir, const std::string& machine_class,
                                    const std::string& gate);

/// Validates every field; throws GateError "<source>: field <path>: <problem> (value: ...)".
Baseline parse_baseline(const nlohmann::json& j, const std::string& source);
nlohmann::json to_json(const Baseline& b);
nlohmann::json to_json(const HistoryEntry& h);

/// Reads and validates a BASELINE file (GateError for malformed JSON too).
Baseline load_baseline(const std::filesystem::path& path);
/// Writes atomically (temp + fsync + rename).
void save_baseline(const std::filesystem::path& path, const Baseline& b);

}  // namespace atlas::gates
