#include "suites/run_queue_wait.hpp"

#include <fstream>
#include <sstream>
#include <string>

namespace atlas::suites {

std::optional<std::int64_t> parse_schedstat_wait_ns(std::string_view line) {
  std::istringstream in{std::string(line)};
  long long on_cpu = 0, wait = 0, slices = 0;
  if (!(in >> on_cpu >> wait >> slices) || wait < 0) return std::nullopt;
  return wait;
}

std::optional<std::int64_t> thread_run_queue_wait_ns() {
  std::ifstream f("/proc/thread-self/schedstat");
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;
  return parse_schedstat_wait_ns(line);
}

}  // namespace atlas::suites
