#include "gates/measured_process.hpp"

#include "common/schedstat.hpp"

#include <dirent.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/process.hpp"

namespace atlas::gates {
namespace {

std::string read_small_file(const std::string& path) {
  std::ifstream f(path);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// Records each thread's latest run-queue wait; threads that exit keep their last value.
void sample_waits(int pid, std::map<long, unsigned long long>& waits, bool& any) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    if (auto w = parse_schedstat_wait(read_small_file(dir + "/" + e->d_name + "/schedstat"))) {
      waits[std::atol(e->d_name)] = *w;
      any = true;
    }
  }
  ::closedir(d);
}

std::optional<CpuTimes> read_cpu_times() { return parse_proc_stat_cpu(read_small_file("/proc/stat")); }

}  // namespace

std::optional<unsigned long long> parse_schedstat_wait(std::string_view line) {
  const auto w = atlas::parse_schedstat_wait_ns(line);
  if (!w) return std::nullopt;
  return static_cast<unsigned long long>(*w);
}

std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view text) {
  const auto nl = text.find('\n');
  std::istringstream in{std::string(text.substr(0, nl))};
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  CpuTimes t;
  unsigned long long v = 0;
  int i = 0;
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already in user.
  while (in >> v) {
    if (i < 8) t.total += v;
    if (i == 7) t.steal = v;
    ++i;
  }
  if (i < 4) return std::nullopt;
  return t;
}

MeasuredProcess run_measured(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
                             const std::map<std::string, std::string>& env_overrides) {
  if (argv.empty()) throw Error("run_measured: empty argv");
  MeasuredProcess result;
  std::map<long, unsigned long long> waits;
  ProcessOptions o;
  o.cwd = cwd;
  o.env_overrides = env_overrides;
  // Sample every 20 ms while output flows; a thread's final wait is read from the zombie.
  o.tick_ms = 20;
  o.on_tick = [&](int pid) { sample_waits(pid, waits, result.schedstat_available); };
  o.on_exit = o.on_tick;
  const auto cpu_before = read_cpu_times();
  const auto t0 = std::chrono::steady_clock::now();
  const ProcessResult p = run_process_with(argv, o);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto cpu_after = read_cpu_times();
  result.exit_status = p.exit_status;
  result.out = p.out;
  result.err = p.err;
  unsigned long long total_wait = 0;
  for (const auto& [tid, w] : waits) total_wait += w;
  result.run_queue_wait_s = static_cast<double>(total_wait) * 1e-9;
  if (cpu_before && cpu_after && cpu_after->total > cpu_before->total)
    result.steal_share = static_cast<double>(cpu_after->steal - cpu_before->steal) /
                         static_cast<double>(cpu_after->total - cpu_before->total);
  return result;
}

}  // namespace atlas::gates
