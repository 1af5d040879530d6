#include "records/metric.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace atlas::records {
const char* to_string(Better b) { return b == Better::lower ? "lower" : "higher"; }
const char* to_string(MetricKind k) {
  switch (k) {
    case MetricKind::timed: return "timed";
    case MetricKind::counted: return "counted";
    case MetricKind::accuracy: return "accuracy";
  }
  return "?";
}

bool is_identity_unit(std::string_view unit) {
  for (std::string_view h : {"fnv1a32", "fnv1a64", "sha256", "hash", "fingerprint"})
    if (unit == h) return true;
  return false;
}

std::string identity_hex(double v, std::string_view unit) {
  if (std::isnan(v)) return "-";
  char buf[40];
  if (!std::isfinite(v) || v < 0 || v >= 0x1p64 || v != std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
  }
  const auto u = static_cast<unsigned long long>(v);
  const bool wide = unit == "fnv1a64" || u > 0xffffffffULL;
  std::snprintf(buf, sizeof buf, wide ? "0x%016llx" : "0x%08llx", u);
  return buf;
}

std::optional<double> identity_value(const std::vector<double>& samples) {
  if (samples.empty()) return std::nullopt;
  for (double s : samples)
    if (s != samples.front()) return std::nullopt;
  return samples.front();
}
}  // namespace atlas::records
