#pragma once
// Human-readable views of a suite result: one row per metric with its summary
// (records/summary.hpp), rendered by any TablePrinter.
#include "records/metric.hpp"
#include "suites/table.hpp"

namespace atlas::suites {

/// metric | unit | better | kind | n | p50 | p90 | p99 | min | max (values with 4 significant
/// decimals for timed metrics, as-is for counted ones; an identity metric, a hash, reads
/// "equal" in the better column and its values in hex).
Table metrics_table(const records::SuiteResult& result);

}  // namespace atlas::suites
