#include "common/option_value.hpp"

#include <charconv>

#include "common/error.hpp"

namespace atlas {

int parse_int_option(std::string_view option, std::string_view value, int min_value, int max_value) {
  int v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < min_value || v > max_value) {
    throw InputError(std::string(option) + " " + std::string(value) + ": expected an integer from " + std::to_string(min_value) + " to " +
                     std::to_string(max_value));
  }
  return v;
}

}  // namespace atlas
