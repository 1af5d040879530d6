#pragma once
// A store of records as lines over commits, the input of change-point detection and charts.
//
// A line is one kind of run on one kind of machine: (machine class, CPU fingerprint, gate or
// suite). Shards of one nightly can land on different CPUs of one machine class, and a timed or
// counted value of one CPU says nothing about another's, so the CPU is part of the key. A
// line's points are its commits, ordered by commit time (git's committer date when a checkout
// can say, else the commit's earliest record), each holding every sample of every record of
// that commit pooled (several gate runs of one commit are more samples of one code).
//
// Never mixed into a line, each counted on the line it would have joined: invalid records,
// records made with a test hook (records::active_test_hooks), records of uncommitted code
// (-dirty), records of another model than the line's (the BASELINE's identity, else the newest
// record's), and for timed metrics records whose box said it was not quiet (records::
// box_caveat). Timed metrics come only from machine classes whose timed values the gate
// config lets a BASELINE keep (gates::timed_baselines_gated); counted ones from any. Nightly
// shards of a commit that also has their merged record are left out (the merge holds them). A
// file that does not parse is named with its error and skipped.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "records/metric.hpp"
#include "records/record.hpp"

namespace atlas::trends {

/// One commit's value of one metric.
struct Point {
  std::size_t commit = 0;     ///< index into Line::commits
  double median = 0;          ///< of the pooled samples (an identity metric: its hash; NaN when mixed)
  double p10 = 0, p90 = 0;    ///< type-7 percentiles of the pooled samples
  std::vector<double> samples;  ///< pooled, in record order
  /// The worst stored gate verdict of the commit's records for this metric: "regression",
  /// "improved", or "" (none, or same / needs-more-samples).
  std::string verdict;
};

struct Series {
  std::string key;  ///< "<suite>/<metric>"
  std::string unit;
  records::Better better = records::Better::lower;
  records::MetricKind kind = records::MetricKind::timed;
  bool identity = false;  ///< a hash (records::is_identity_unit): changes are markers, not sizes
  std::vector<Point> points;  ///< oldest first; commits without the metric have no point
};

struct Commit {
  std::string sha;
  std::int64_t time = 0;         ///< seconds since the epoch: committer date, else the earliest record's start
  bool time_from_git = false;
  std::vector<std::string> records;  ///< the record files pooled into this commit's points
};

/// Records left out of a line, by reason (each record counted once, under its first reason in
/// this order), and metrics left out.
struct LeftOut {
  int invalid = 0, test_hooks = 0, dirty = 0, other_model = 0, merged_shards = 0;
  int noisy = 0;              ///< records whose timed metrics were left out (box not quiet); counted ones kept
  int timed_not_quiet = 0;    ///< timed metrics not trended: the machine class is not a quiet one
  std::vector<std::string> other_models;  ///< the models of the other_model records, each once
  int records() const { return invalid + test_hooks + dirty + other_model + merged_shards; }
  LeftOut& operator+=(const LeftOut& o);
};

struct LastVerdict {
  std::string commit, record, overall;  ///< overall: "pass", "regression", "inconclusive", "not judged"
  std::vector<std::string> reasons;
};

struct Line {
  std::string machine_class, gate_or_suite;
  std::string cpu;     ///< the CPU as people read it: "AMD EPYC 7763 64-Core Processor, 2 cores"
  std::string cpu_id;  ///< 8 hex digits of fnv1a32(cpu): part of file names
  std::string model;   ///< the line's model: "path (format, sha256 <12 hex>)"
  std::vector<Commit> commits;           ///< ordered
  std::map<std::string, Series> series;  ///< metric key -> series
  std::optional<LastVerdict> last_verdict;  ///< of the newest gated record
  LeftOut left_out;
  /// Each suite's config in the line's newest record: a BASELINE whose identity names another
  /// config (another CPU's instruction counts, other prompts) does not describe this line.
  std::map<std::string, nlohmann::json> suite_configs;
  bool timed_trended = true;  ///< false: the machine class is not quiet, timed metrics left out
  /// "<machine_class>/<gate_or_suite>-<cpu_id>": unique per line, safe as a path.
  std::string id() const;
};

struct Unparsable {
  std::filesystem::path path;
  std::string error;
};

struct History {
  std::vector<Line> lines;  ///< by machine class, gate, CPU
  std::vector<Unparsable> unparsable;
  int records_read = 0;     ///< files that parsed
};

struct HistoryOptions {
  std::filesystem::path store_dir;
  /// BASELINE files (baselines/<class>/<gate>.BASELINE.json): their identity names a line's model.
  std::filesystem::path baselines_dir;
  /// The gate config whose rules apply to records of a gate or suite (quiet classes, tolerances).
  std::function<gates::GateConfig(const std::string& gate_or_suite)> config_for;
  /// Committer time of a full sha (seconds since the epoch), when known (commit_times.hpp).
  std::function<std::optional<std::int64_t>(const std::string& sha)> commit_time;
};

/// Reads every record of the store (records::list_records) into lines. A malformed BASELINE is
/// an error (gates::GateError); a malformed record is not (History::unparsable).
History load_history(const HistoryOptions& options);

/// The baseline of (machine class, gate) under `baselines_dir`, when the file exists. Throws
/// gates::GateError when it does not parse.
std::optional<gates::Baseline> find_baseline(const std::filesystem::path& baselines_dir, const std::string& machine_class,
                                             const std::string& gate);

/// fnv1a32 of `text` as 8 lower-case hex digits.
std::string short_hash(const std::string& text);

}  // namespace atlas::trends
