#pragma once
// Deterministic slices of a suite list for parallel nightly runs (CI matrix, Slurm array,
// Kubernetes indexed job): shard i of N takes the entries at positions i, i+N, i+2N, ... of the
// config's list, so the N slices are disjoint, cover the list, differ in size by at most one,
// and depend only on (list, i, N). Indices are 0-based like $JOB_COMPLETION_INDEX.
#include <string>
#include <vector>


namespace atlas::gates {

struct Shard {
  int index = 0;  ///< 0 <= index < count
  int count = 1;
};

/// Parses "i/N"; throws GateError naming the value when malformed or out of range.
Shard parse_shard(const std::string& text);

std::vector<std::string> shard_slice(const std::vector<std::string>& suites, const Shard& shard);

}  // namespace atlas::gates
