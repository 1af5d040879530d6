#include "records/metric.hpp"

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
}  // namespace atlas::records
