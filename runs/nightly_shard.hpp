#pragma once
// One shard of the nightly run as one call (what `atlas-bench nightly --shard i/N` runs): a
// deterministic slice of the nightly suite list (so a CI matrix, Slurm array or Kubernetes
// indexed job spreads it), judged against the nightly BASELINE when one exists, written as a
// shard record; `atlas-bench records merge` combines the shards.
#include <ostream>
#include <string>

#include "runs/judged_run.hpp"

namespace atlas::runs {

struct NightlyShardOptions {
  GateRunOptions common{"nightly"};
  std::string shard = "0/1";  ///< "i/N", 0 <= i < N (gates/shard.hpp)
};

/// Runs the shard and prints what ran, the record path and (when judged) the tables to `out`.
/// Returns the exit code as the pull-request gate's; without a baseline the shard is recorded,
/// not judged, and the run returns 0. Throws atlas::Error subclasses for bad input.
int run_nightly_shard(const NightlyShardOptions& o, const RunContext& ctx, std::ostream& out);

}  // namespace atlas::runs
