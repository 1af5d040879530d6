#pragma once
// Quiet-box check: is this machine idle enough for timed metrics to mean something?
//
// CPU: 1-minute load average per online core (/proc/loadavg; pyperf and Google Benchmark
// record it too) and the busiest foreign processes, from /proc/<pid>/stat utime+stime deltas
// over a short window, excluding this process and its descendants.
// GPU (NVML, optional): foreign compute processes, utilisation, temperature and the
// clocks-event (throttle) reasons; samples taken while a thermal/power slowdown reason is
// active are invalid (nvbench drops throttled samples the same way).
// Parsers and the verdict are pure functions over strings/values so tests feed /proc-like text.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/config.hpp"
#include "gates/nvml.hpp"

namespace atlas::gates {

struct LoadAverage {
  double load1 = 0, load5 = 0, load15 = 0;
  int runnable = 0, total = 0;  ///< "runnable/total" scheduling entities
};
/// Parses /proc/loadavg text ("0.52 0.58 0.59 2/977 12345"); throws GateError on malformed text.
LoadAverage parse_loadavg(std::string_view text);

struct ProcStat {
  int pid = 0;
  std::string comm;
  char state = '?';
  int ppid = 0;
  unsigned long long utime = 0, stime = 0;  ///< clock ticks (sysconf(_SC_CLK_TCK))
};
/// Parses one /proc/<pid>/stat line (comm may hold spaces and parentheses: it ends at the last
/// ')'). nullopt for malformed text (a process may vanish mid-read).
std::optional<ProcStat> parse_proc_stat(std::string_view line);

struct ProcessCpu {
  int pid = 0;
  std::string comm;
  double cpu_percent = 0;  ///< % of one core over the window
};
/// The `top_n` processes with the most CPU time between two snapshots, excluding `self_pid` and
/// its descendants (ppid chains in either snapshot). A process new in `after` counts all its ticks.
std::vector<ProcessCpu> busiest_foreign_processes(const std::vector<ProcStat>& before, const std::vector<ProcStat>& after,
                                                  double window_s, long clk_tck, int self_pid, std::size_t top_n);

struct GpuSection {
  bool available = false;
  std::string na_reason;  ///< why NVML is unavailable ("n/a" section)
  std::vector<GpuSnapshot> devices;
};

/// Everything the verdict needs, gathered by probe_quiet_box() or built by a test.
struct QuietBoxInputs {
  LoadAverage load;
  int cores = 1;
  std::vector<ProcessCpu> busiest;
  GpuSection gpu;
};

struct QuietBoxReport {
  bool quiet = true;
  std::vector<std::string> reasons;  ///< why not quiet, one sentence each
  QuietBoxInputs inputs;
  double load_per_core = 0;
  QuietBoxThresholds thresholds;
};

/// The verdict: not quiet when load per core, the busiest foreign process, GPU utilisation,
/// temperature, a foreign compute process or an active slowdown reason exceed the thresholds.
QuietBoxReport evaluate_quiet_box(const QuietBoxInputs& in, const QuietBoxThresholds& t);

/// Reads /proc (two process snapshots `sample_window_ms` apart) and NVML.
QuietBoxInputs probe_quiet_box(const QuietBoxThresholds& t);
QuietBoxReport check_quiet_box(const QuietBoxThresholds& t);
/// check_quiet_box, repeated every 5 s until the box is quiet or t.settle_max_s have passed;
/// `on_wait` is told each reason the box is still busy. Returns the last report.
QuietBoxReport settle_quiet_box(const QuietBoxThresholds& t, const std::function<void(const QuietBoxReport&)>& on_wait = {});

/// All /proc/<pid>/stat entries now.
std::vector<ProcStat> snapshot_processes();

nlohmann::json to_json(const QuietBoxReport& r);

/// What the monitor saw during one window.
struct MonitorWindow {
  int samples = 0;                 ///< NVML polls
  int slowdown_samples = 0;        ///< polls with a configured slowdown reason set
  std::vector<std::string> slowdown_reasons_seen;
  int min_sm_clock_mhz = -1;
  std::vector<ProcessCpu> busiest;  ///< foreign CPU use over the window
  double window_s = 0;
  std::string gpu_na_reason;        ///< set when NVML is unavailable
  bool throttled() const { return slowdown_samples > 0; }
};
nlohmann::json to_json(const MonitorWindow& w);

/// Samples NVML clocks-event reasons in a background thread between start() and stop(), and
/// foreign CPU use across the window, so callers can drop (and count) measurements taken under
/// a thermal/power slowdown.
class QuietBoxMonitor {
 public:
  explicit QuietBoxMonitor(QuietBoxThresholds t);
  ~QuietBoxMonitor();
  QuietBoxMonitor(const QuietBoxMonitor&) = delete;
  QuietBoxMonitor& operator=(const QuietBoxMonitor&) = delete;

  void start();
  MonitorWindow stop();

 private:
  void loop();
  QuietBoxThresholds t_;
  std::shared_ptr<Nvml> nvml_;
  std::string nvml_why_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::mutex mu_;
  MonitorWindow window_;
  std::vector<ProcStat> procs_before_;
  std::int64_t t_start_ns_ = 0;
};

}  // namespace atlas::gates
