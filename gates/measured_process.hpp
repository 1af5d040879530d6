#pragma once
// Running a program while measuring how much of its run it spent waiting for a CPU: the
// scheduler's per-thread run-queue wait (/proc/<pid>/task/<tid>/schedstat, field 2, ns; sched
// stats are on in Debian/Ubuntu kernels) summed over its threads, sampled until the child exits
// and read once more from the zombie before it is reaped, plus the hypervisor's steal share of
// all CPUs over the run (/proc/stat). These say whether load on the box touched this process's
// timings, which foreign CPU use alone does not (a busy process on another core costs nothing).
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace atlas::gates {

struct MeasuredProcess {
  int exit_status = -1;          ///< exit code, or -1 when it could not start / was killed
  std::string out, err;
  double wall_s = 0;
  double run_queue_wait_s = 0;   ///< summed over the child's threads (0 when schedstat is unavailable)
  bool schedstat_available = false;
  double steal_share = 0;        ///< Δsteal / Δ(all CPU time) over the run
};

/// Runs `argv` (argv[0] a path or looked up on PATH) in `cwd` with `env_overrides` set on top of
/// this process's environment (an empty value unsets), capturing stdout and stderr.
MeasuredProcess run_measured(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                             const std::map<std::string, std::string>& env_overrides = {});

/// The run-queue wait (ns) of a schedstat line "<on-cpu ns> <wait ns> <slices>"; nullopt when malformed.
std::optional<unsigned long long> parse_schedstat_wait(std::string_view line);

struct CpuTimes {
  unsigned long long total = 0, steal = 0;  ///< clock ticks summed over all CPUs
};
/// The aggregate "cpu " line of /proc/stat; nullopt when malformed.
std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view text);

}  // namespace atlas::gates
