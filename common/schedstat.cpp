#include "common/schedstat.hpp"

#include <sstream>
#include <string>

namespace atlas {

std::optional<std::int64_t> parse_schedstat_wait_ns(std::string_view line) {
  std::istringstream in{std::string(line)};
  long long on_cpu = 0, wait = 0, slices = 0;
  if (!(in >> on_cpu >> wait >> slices) || wait < 0) return std::nullopt;
  return wait;
}

}  // namespace atlas
