#include "common/natural_order.hpp"

#include <cstdlib>
#include <string>

namespace atlas {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the number starting at s[i] (digits, then optionally '.' and at least one digit).
std::size_t number_length(std::string_view s, std::size_t i) {
  std::size_t j = i;
  while (j < s.size() && is_digit(s[j])) ++j;
  if (j + 1 < s.size() && s[j] == '.' && is_digit(s[j + 1])) {
    ++j;
    while (j < s.size() && is_digit(s[j])) ++j;
  }
  return j - i;
}

double value_of(std::string_view s) { return std::strtod(std::string(s).c_str(), nullptr); }

}  // namespace

bool natural_less(std::string_view a, std::string_view b) noexcept {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const std::size_t la = number_length(a, i), lb = number_length(b, j);
      const double va = value_of(a.substr(i, la)), vb = value_of(b.substr(j, lb));
      if (va != vb) return va < vb;
      if (la != lb) return la < lb;  // "02" after "2": a total order for names that differ
      const std::string_view na = a.substr(i, la), nb = b.substr(j, lb);
      if (na != nb) return na < nb;
      i += la;
      j += lb;
      continue;
    }
    const auto ca = static_cast<unsigned char>(a[i]), cb = static_cast<unsigned char>(b[j]);
    if (ca != cb) return ca < cb;
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace atlas
