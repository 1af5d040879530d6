#pragma once
// The .benchmarks store (pytest-benchmark's directory convention, asv's per-machine layout):
//
//   <store>/<machine_class>/<commit>[-dirty]/<gate_or_suite>-<UTC, e.g. 20261129T143320Z>.json
//
// One file per run, written atomically and never overwritten. The path alone says which
// machine, which code and which gate produced a record, so listing needs no parsing.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "records/record.hpp"

namespace atlas::records {

/// One record file as the layout describes it (nothing read from inside the file).
struct StoredRecord {
  std::filesystem::path path;
  std::string machine_class;
  std::string commit;  ///< full sha (or "unknown"), without "-dirty"
  bool dirty = false;
  std::string gate_or_suite;
  std::string utc;  ///< compact UTC from the file name, e.g. "20261129T143320Z"
  int sequence = 1;  ///< N of a "-N" suffix (several records in one second), else 1
  /// The checkout holding the store tracks this file although its ignore rules exclude it
  /// (records::tracked_though_ignored): committed with `git add -f`, so a commit brought it.
  bool committed_though_ignored = false;
};

/// "20261129T143320Z" from an ISO-8601 UTC time "2026-11-29T14:33:20Z" (as written in
/// start_utc). Throws RecordError when `iso` is not in that form.
std::string compact_utc(const std::string& iso);

/// Path of `r` relative to the store root (from machine.machine_class, git.commit, git.dirty,
/// gate_or_suite and start_utc). Throws RecordError naming the field when one of them is empty
/// or not a safe path component (letters, digits, '.', '_', '+', '-'; not starting with '.').
std::filesystem::path record_relative_path(const Record& r);

/// Writes `r` into the store and returns its path. Never overwrites: when a record for the same
/// second already exists, "-2", "-3", ... is appended to the stem. Throws RecordError / Error.
std::filesystem::path write_to_store(const Record& r, const std::filesystem::path& store_dir);

/// Every record file under `store_dir`, oldest first (by UTC stamp, then path). Files that do
/// not follow the layout (temporary files, notes) are skipped. A missing store lists nothing.
/// One `git ls-files` marks the files committed into an ignored store (committed_though_ignored).
std::vector<StoredRecord> list_records(const std::filesystem::path& store_dir);

/// Why `r`, read from `s`, cannot stand for the path it sits at ("" when it can): its git.commit
/// (or dirty flag) disagrees with the folder, its machine class with the machine folder, its
/// gate_or_suite or start_utc with the file name, its start_utc is more than a day in the future
/// (clock skew between machines is allowed for), or it was committed into a store the checkout
/// ignores. A file committed under .benchmarks/ by a pull request claims what it likes: a
/// year-2999 record was every later pick's "newest", and one with a plausible stamp still ranked
/// by that stamp; a store's records come from runs (write_to_store), or from a records branch
/// that does not ignore them. Picks, `diff` and the trends skip such records and name them.
std::string provenance_problem(const Record& r, const StoredRecord& s);

/// Resolves a command-line argument naming a record: an existing file path is returned as is;
/// otherwise `arg` is a commit-ish prefix ("3f9a0c1", a full sha, or "<sha>-dirty") and the
/// newest valid record of commit_records(arg) is returned (the newest of any when none is
/// valid; restricted to `gate_or_suite` when not empty). When no directory matches and `repo_dir` is given, `git rev-parse arg` (e.g. "HEAD",
/// "main") is tried. Throws RecordError when nothing matches, or when the prefix matches more
/// than one commit (the message lists the candidates).
std::filesystem::path resolve_record(const std::string& arg, const std::filesystem::path& store_dir,
                                     const std::string& gate_or_suite = "",
                                     const std::optional<std::filesystem::path>& repo_dir = std::nullopt);

/// Every record file of the one commit `arg` names, newest first (`arg` as for resolve_record).
/// A name that does not end in "-dirty" names the commit's clean records only: a record taken
/// with uncommitted changes ran other code, and stands in for the commit only when asked for
/// (`<sha>-dirty`, or `allow_dirty`). Throws RecordError when nothing matches (saying when only
/// dirty records exist and how to name them) or when the prefix names two commits.
std::vector<StoredRecord> commit_records(const std::string& arg, const std::filesystem::path& store_dir,
                                         const std::string& gate_or_suite = "",
                                         const std::optional<std::filesystem::path>& repo_dir = std::nullopt,
                                         bool allow_dirty = false);

/// What kind of run a record is, for choosing comparable records: its gate or suite, target
/// (config.target_name, e.g. "engine:cpu"), active test hooks, nightly shard ("i/N" when one of
/// several, else ""), merged from shards, valid.
struct RecordKind {
  std::string gate_or_suite, target, shard;
  std::vector<std::string> hooks;
  bool merged = false;
  bool valid = true;
  /// e.g. "pr, engine:cpu, no test hooks" or "nightly, engine:cpu, shard 1/4, test hooks ...".
  std::string describe() const;
};
RecordKind kind_of(const Record& r);

}  // namespace atlas::records
