#include "suites/run_queue_wait.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace atlas::suites {

std::optional<std::int64_t> parse_schedstat_wait_ns(std::string_view line) {
  std::istringstream in{std::string(line)};
  long long on_cpu = 0, wait = 0, slices = 0;
  if (!(in >> on_cpu >> wait >> slices) || wait < 0) return std::nullopt;
  return wait;
}

std::optional<std::int64_t> process_run_queue_wait_ns() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/task", ec);
  if (ec) return std::nullopt;
  std::int64_t total = 0;
  bool any = false;
  for (const auto& task : it) {
    std::ifstream f(task.path() / "schedstat");
    std::string line;
    if (!f || !std::getline(f, line)) continue;  // a thread that just exited
    if (const auto w = parse_schedstat_wait_ns(line)) {
      total += *w;
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return total;
}

}  // namespace atlas::suites
