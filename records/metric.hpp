#pragma once
// A metric as suites produce it and records store it: raw samples plus what they mean.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace atlas::records {

enum class Better { lower, higher };
/// timed: wall/GPU time, gated statistically; counted: exact counts (launches, syncs, tokens
/// reused), gated exactly; accuracy: scores, gated exactly.
enum class MetricKind { timed, counted, accuracy };

const char* to_string(Better b);
const char* to_string(MetricKind k);

struct Metric {
  std::string unit;              ///< "ms", "us", "tok/s", "count", "fraction", ...
  Better better = Better::lower;
  MetricKind kind = MetricKind::timed;
  std::vector<double> samples;   ///< raw, in the order measured
  std::string description;
};

/// What one suite contributes to a record.
struct SuiteResult {
  std::string name;                       ///< "ttft" | "agentic" | "bfcl" | "decode-anatomy" | ...
  std::map<std::string, Metric> metrics;  ///< metric name -> metric
  nlohmann::json details = nlohmann::json::object();  ///< suite-specific tables, per-turn data
  nlohmann::json config = nlohmann::json::object();   ///< the suite configuration used
};

}  // namespace atlas::records
