#pragma once
// One line of the Linux scheduler's per-thread statistics (/proc/<pid>/task/<tid>/schedstat:
// "<on-cpu ns> <run-queue wait ns> <timeslices>", Documentation/scheduler/sched-stats.rst), read
// by the gate for a measured child process and by the suites for their own request thread.
#include <cstdint>
#include <optional>
#include <string_view>

namespace atlas {

/// The run-queue wait field, ns; nothing for a line that does not hold three numbers.
std::optional<std::int64_t> parse_schedstat_wait_ns(std::string_view line);

}  // namespace atlas
