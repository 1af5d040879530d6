#pragma once
// Choosing which records a comparison reads (`atlas-bench diff`, `baseline init|ratchet|accept`).
//
// A commit usually has several records in the store: gate runs, `run --suite ...` runs, nightly
// shards and their merge, runs on other machine classes or models, runs with a planted slowdown.
// Two records are comparable only when they measured the same thing the same way (comparable()
// names the first difference); among a commit's comparable records the valid ones without test
// hooks are preferred, then whole runs over one nightly shard, then the newest (by the store's
// UTC stamp, then sequence, then path: the same store always gives the same pick). Nothing is
// ever picked silently: every pick carries a sentence saying which record it is and why, and a
// commit with no comparable record is refused with a list of what it has and how each differs.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "records/record.hpp"
#include "records/store.hpp"

namespace atlas::records {

/// What produced a record, from its contents: "gate" (a gate run: verdicts with an overall),
/// "nightly shard i/N", "merged" (records merge), "run" (a suite run, no verdicts).
std::string producer_of(const Record& r);

/// "" when `a` and `b` can be compared metric by metric; else the first difference, naming
/// both values: machine class, gate or suite, producer, target, model (sha256, else path and
/// format), a suite config of a suite both ran, or no suite in common.
std::string comparable(const Record& a, const Record& b);

struct PickedRecord {
  std::filesystem::path path;
  std::string why;  ///< which record was taken and why, for the user
};

struct PickOptions {
  std::string gate_or_suite;  ///< consider only records of this gate or suite ("" = any)
  bool allow_dirty = false;   ///< a clean commit name may also pick its -dirty records (clean preferred)
  std::optional<std::filesystem::path> repo_dir;  ///< for `git rev-parse` of symbolic names ("HEAD", "main")
};

/// One record named by `arg`: a file is taken as given; a commit picks among its records the
/// valid, hook-free, whole run, preferring `prefer_gate` ("" = no preference; `baseline ratchet`
/// passes the baseline's gate), then the newest. Throws RecordError as commit_records.
PickedRecord pick_record(const std::string& arg, const std::filesystem::path& store_dir, const PickOptions& options,
                         const std::string& prefer_gate = "");

struct PickedPair {
  PickedRecord a, b;
};

/// Both sides of a diff. A file side is taken as given and a commit side is picked among the
/// records comparable with it; with two commits, B's candidates are tried in preference order
/// and the first that some record of A is comparable with wins (so a newer record of another
/// kind on B cannot make the diff fail or compare unlike with unlike). Throws RecordError when
/// no comparable pair exists, listing each record of the commit(s) and how it differs.
PickedPair pick_pair(const std::string& a_arg, const std::string& b_arg, const std::filesystem::path& store_dir,
                     const PickOptions& options);

}  // namespace atlas::records
