#pragma once
// Combining the records of the shards of one run (e.g. a nightly split across jobs) into one.
#include <span>

#include "records/record.hpp"

namespace atlas::records {

/// Merges shard records of one run into a single record.
///
/// Requirements (RecordError naming the shard index, the field and both values otherwise):
/// the same git commit, dirty flag and diff hash; the same machine_class; the same model
/// (sha256 and path); data_assets and top-level config that agree on every shared key.
/// Result: suites and their metrics are the union; a metric present in several shards has its
/// samples concatenated in shard order, allowed only when the suite config and the metric's
/// unit, better and kind are identical (otherwise the samples would not measure the same thing).
/// Suite details are merged key by key (a key with different values in two shards is an error).
/// start_utc = earliest, end_utc = latest, gate_or_suite = the shards' common value, else
/// "merged"; valid = all valid (reasons joined with "; "); verdicts = null (a merged record is
/// re-gated, not inherited); endpoint and quiet_box = the first non-null; merged_from = every
/// shard's run_id; run_id = "merged-" + first 12 hex digits of sha256 of the joined shard ids
/// (deterministic: merging the same shards twice gives the same id).
/// Throws RecordError for an empty list, for one record given twice (same run_id) and for two
/// records of the same nightly shard (verdicts.shard "i/N").
Record merge_records(std::span<const Record> shards);

}  // namespace atlas::records
