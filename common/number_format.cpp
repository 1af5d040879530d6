#include "common/number_format.hpp"

#include <cmath>
#include <cstdio>

namespace atlas {

std::string format_number(double v) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";  // also -0
  const double a = std::fabs(v);
  char buf[64];
  if (a < 1e-4 || a >= 1e15) {
    std::snprintf(buf, sizeof buf, "%.3e", v);
    return buf;
  }
  // Decimals for four significant digits; none from 1000 on (an exponent there hid the digits
  // people compare: 1.289e+04 beside 17959.8).
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  const int decimals = magnitude >= 3 ? 0 : 3 - magnitude;
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string format_percent(double percent, bool sign) {
  if (std::isnan(percent)) return "-";
  if (std::isinf(percent)) return percent > 0 ? "+inf" : "-inf";
  char buf[320];  // the widest double in %f: 309 digits, sign, point, decimals, %
  const bool tiny = percent != 0.0 && std::fabs(percent) < 0.005;
  if (sign) std::snprintf(buf, sizeof buf, tiny ? "%+.2g%%" : "%+.2f%%", percent);
  else std::snprintf(buf, sizeof buf, tiny ? "%.2g%%" : "%.2f%%", percent);
  return buf;
}

std::string format_fraction_percent(double fraction, bool sign) { return format_percent(100 * fraction, sign); }

}  // namespace atlas
