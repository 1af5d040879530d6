#pragma once
// A metric as suites produce it and records store it: raw samples plus what they mean.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace atlas::records {

enum class Better { lower, higher };
/// timed: wall/GPU time, gated statistically; counted: exact counts (launches, syncs, tokens
/// reused), gated exactly; accuracy: scores, gated exactly.
enum class MetricKind { timed, counted, accuracy };

const char* to_string(Better b);
const char* to_string(MetricKind k);

/// Units that name a hash (fnv1a32, fnv1a64, sha256, hash, fingerprint). A metric in one is an
/// identity, not a quantity: it must stay equal and neither direction is better (an output
/// fingerprint that changes means the generated tokens changed; MLPerf TEST06-style check).
/// Gates fail any change, `diff` reports it as "changed", printers show the value in hex.
bool is_identity_unit(std::string_view unit);

/// An identity metric's value as people compare it: "0x" and 8 hex digits, 16 for a 64-bit
/// unit (fnv1a64) or a value above 2^32; "-" for NaN; a value no hash can be (negative,
/// fractional, infinite, >= 2^64) in decimal. Samples hold the hash as a double, exact to 2^53.
std::string identity_hex(double v, std::string_view unit = {});

/// The one value every sample of an identity metric holds; nullopt when there are none or
/// they disagree (the runs produced different outputs: a median would pick one, or average
/// two hashes into a value that never occurred).
std::optional<double> identity_value(const std::vector<double>& samples);

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
