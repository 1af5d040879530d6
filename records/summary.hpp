#pragma once
// Named summary of a metric's samples, the numbers every report and diff shows.
#include <limits>
#include <span>

#include <nlohmann/json.hpp>

namespace atlas::records {

/// Summary statistics of one metric's samples (same units as the samples).
/// p50/p90/p99 are type-7 percentiles (numpy 'linear'), stdev is the sample standard deviation
/// (n-1), ci95 is the 95 % percentile-bootstrap CI of the median (2000 resamples, seed 42), see
/// records/stats.hpp. With n = 0 every value is NaN (written as null in JSON).
struct Summary {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  int n = 0;
  double min = kNaN, p50 = kNaN, mean = kNaN, p90 = kNaN, p99 = kNaN, max = kNaN, stdev = kNaN,
         ci95_lo = kNaN, ci95_hi = kNaN;
};

/// Summarizes raw samples. Throws RecordError when a sample is NaN.
Summary summarize(std::span<const double> samples);

/// {"n", "min", "p50", "mean", "p90", "p99", "max", "stdev", "ci95_lo", "ci95_hi"}; NaN -> null.
nlohmann::json to_json(const Summary& s);

}  // namespace atlas::records
