#include "gates/report.hpp"

#include <cstdio>

namespace atlas::gates {

std::string format_value(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

std::string format_delta_pct(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.2f%%", *v);
  return buf;
}

}  // namespace atlas::gates
