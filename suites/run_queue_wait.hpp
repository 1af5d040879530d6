#pragma once
// How long a thread has waited for a CPU: the run-queue wait the Linux scheduler
// keeps per thread (/proc/<pid>/task/<tid>/schedstat, second field: time runnable but not
// running, ns; Documentation/scheduler/sched-stats.rst). A neighbour job on a small box stretches
// a measured request by about this much; subtracting it leaves the time the request took while
// it had a CPU (sleeps and device waits stay in), which a paired timing judgement can compare
// across two processes that were given their CPU unequally.
#include <cstdint>
#include <optional>

namespace atlas::suites {

/// The run-queue wait of the calling thread so far, ns (/proc/thread-self/schedstat); nothing
/// where schedstat is not available (not Linux, or a kernel without CONFIG_SCHED_INFO). The
/// calling thread, not the process: the engine's forward runs in the thread that asks for it
/// (its thread pool's caller takes chunk 0; with one CPU thread it does all the work), and the
/// process's other threads (a progress printer, a monitor) wait at the same time without
/// stretching the request: summed, they over-corrected (a cold TTFT's min-of-9 spread 47 % on a
/// loaded 2-core box, against 6 % for the median). With several CPU threads the workers' waits are
/// not counted, so the correction is partial there; the timed gate runs one thread.
std::optional<std::int64_t> thread_run_queue_wait_ns();


}  // namespace atlas::suites
