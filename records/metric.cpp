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

std::string identity_hex(double v) {
  if (std::isnan(v)) return "-";
  const auto u = static_cast<std::uint64_t>(v);
  char buf[32];
  if (u <= 0xffffffffULL) std::snprintf(buf, sizeof buf, "0x%08llx", static_cast<unsigned long long>(u));
  else std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(u));
  return buf;
}
}  // namespace atlas::records
