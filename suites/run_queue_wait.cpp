#include "suites/run_queue_wait.hpp"

#include "common/schedstat.hpp"

#include <fstream>
#include <string>

namespace atlas::suites {

std::optional<std::int64_t> thread_run_queue_wait_ns() {
  std::ifstream f("/proc/thread-self/schedstat");
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;
  return parse_schedstat_wait_ns(line);
}

}  // namespace atlas::suites
