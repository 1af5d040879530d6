#include "gates/report.hpp"

#include "common/number_format.hpp"
#include "records/metric.hpp"

namespace atlas::gates {

std::string format_value(const std::optional<double>& v) { return v ? format_number(*v) : "-"; }

std::string format_value(const std::optional<double>& v, std::string_view unit) {
  return v && records::is_identity_unit(unit) ? records::identity_hex(*v, unit) : format_value(v);
}

std::string format_delta_pct(const std::optional<double>& v) { return v ? format_percent(*v, true) : "-"; }

}  // namespace atlas::gates
