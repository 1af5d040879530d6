#pragma once
// How long this process's threads have waited for a CPU: the run-queue wait the Linux scheduler
// keeps per thread (/proc/<pid>/task/<tid>/schedstat, second field: time runnable but not
// running, ns; Documentation/scheduler/sched-stats.rst). A neighbour job on a small box stretches
// a measured request by about this much; subtracting it leaves the time the request took while
// it had a CPU (sleeps and device waits stay in), which a paired timing judgement can compare
// across two processes that were given their CPU unequally.
#include <cstdint>
#include <optional>
#include <string_view>

namespace atlas::suites {

/// The summed run-queue wait of every thread of this process so far, ns; nothing where
/// schedstat is not available (not Linux, or a kernel without CONFIG_SCHED_INFO). A thread that
/// exited takes its wait with it: measure across work whose threads outlive it (the engine's).
std::optional<std::int64_t> process_run_queue_wait_ns();

/// The wait field of one schedstat line ("<on-cpu ns> <wait ns> <timeslices>").
std::optional<std::int64_t> parse_schedstat_wait_ns(std::string_view line);

}  // namespace atlas::suites
