#include "gates/quiet_box.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/clock.hpp"
#include "common/number_format.hpp"
#include "gates/error.hpp"

namespace atlas::gates {
namespace {

std::string fmt(double v) { return format_number(v); }

// Pids of `self` and all its descendants, following ppid links in the given snapshots.
std::set<int> self_and_descendants(int self, const std::vector<ProcStat>& a, const std::vector<ProcStat>& b) {
  std::multimap<int, int> children;
  for (const auto* snap : {&a, &b}) {
    for (const auto& p : *snap) children.emplace(p.ppid, p.pid);
  }
  std::set<int> out{self};
  std::vector<int> frontier{self};
  while (!frontier.empty()) {
    const int pid = frontier.back();
    frontier.pop_back();
    const auto [lo, hi] = children.equal_range(pid);
    for (auto it = lo; it != hi; ++it) {
      if (out.insert(it->second).second) frontier.push_back(it->second);
    }
  }
  return out;
}

std::optional<std::string> read_small_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

GpuSection probe_gpu(bool with_processes) {
  GpuSection g;
  std::string why;
  auto nvml = Nvml::load(why);
  if (!nvml) {
    g.na_reason = why;
    return g;
  }
  const unsigned n = nvml->device_count();
  if (n == 0) {
    g.na_reason = "NVML reports no devices";
    return g;
  }
  g.available = true;
  for (unsigned i = 0; i < n; ++i) g.devices.push_back(nvml->snapshot(i, with_processes));
  return g;
}

nlohmann::json busiest_json(const std::vector<ProcessCpu>& procs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : procs) out.push_back({{"pid", p.pid}, {"comm", p.comm}, {"cpu_percent", p.cpu_percent}});
  return out;
}

}  // namespace

LoadAverage parse_loadavg(std::string_view text) {
  LoadAverage l;
  char slash = 0;
  std::istringstream in{std::string(text)};
  if (!(in >> l.load1 >> l.load5 >> l.load15 >> l.runnable >> slash >> l.total) || slash != '/') {
    std::string shown(text.substr(0, 60));
    while (!shown.empty() && shown.back() == '\n') shown.pop_back();
    throw GateError("/proc/loadavg: cannot parse '" + shown + "'");
  }
  return l;
}

std::optional<ProcStat> parse_proc_stat(std::string_view line) {
  const auto open = line.find('(');
  const auto close = line.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcStat p;
  const auto pid_text = line.substr(0, open);
  const auto* first = pid_text.data();
  while (first < pid_text.data() + pid_text.size() && *first == ' ') ++first;
  if (std::from_chars(first, pid_text.data() + pid_text.size(), p.pid).ec != std::errc{}) return std::nullopt;
  p.comm = std::string(line.substr(open + 1, close - open - 1));
  // After "comm)": state(3) ppid(4) pgrp session tty_nr tpgid flags minflt cminflt majflt
  // cmajflt utime(14) stime(15) ... (proc(5), fields numbered from 1).
  std::istringstream rest{std::string(line.substr(close + 1))};
  std::string skip;
  if (!(rest >> p.state >> p.ppid)) return std::nullopt;
  for (int field = 5; field <= 13; ++field) {
    if (!(rest >> skip)) return std::nullopt;
  }
  if (!(rest >> p.utime >> p.stime)) return std::nullopt;
  return p;
}

std::vector<ProcessCpu> busiest_foreign_processes(const std::vector<ProcStat>& before, const std::vector<ProcStat>& after,
                                                  double window_s, long clk_tck, int self_pid, std::size_t top_n) {
  const auto ours = self_and_descendants(self_pid, before, after);
  std::map<int, const ProcStat*> prev;
  for (const auto& p : before) prev[p.pid] = &p;
  std::vector<ProcessCpu> out;
  if (window_s <= 0 || clk_tck <= 0) return out;
  for (const auto& p : after) {
    if (ours.count(p.pid)) continue;
    const unsigned long long now = p.utime + p.stime;
    unsigned long long then = 0;
    if (const auto it = prev.find(p.pid); it != prev.end()) then = it->second->utime + it->second->stime;
    if (now <= then) continue;
    const double pct = 100.0 * static_cast<double>(now - then) / static_cast<double>(clk_tck) / window_s;
    out.push_back({p.pid, p.comm, pct});
  }
  std::sort(out.begin(), out.end(), [](const ProcessCpu& a, const ProcessCpu& b) {
    return a.cpu_percent != b.cpu_percent ? a.cpu_percent > b.cpu_percent : a.pid < b.pid;
  });
  if (out.size() > top_n) out.resize(top_n);
  return out;
}

QuietBoxReport evaluate_quiet_box(const QuietBoxInputs& in, const QuietBoxThresholds& t) {
  QuietBoxReport r;
  r.inputs = in;
  r.thresholds = t;
  r.load_per_core = in.load.load1 / std::max(1, in.cores);
  auto not_quiet = [&r](std::string why) {
    r.quiet = false;
    r.reasons.push_back(std::move(why));
  };
  if (r.load_per_core > t.max_load_per_core) {
    not_quiet("1-minute load " + fmt(in.load.load1) + " on " + std::to_string(in.cores) + " cores = " +
              fmt(r.load_per_core) + " per core > " + fmt(t.max_load_per_core));
  }
  for (const auto& p : in.busiest) {
    if (p.cpu_percent > t.max_foreign_process_cpu_percent) {
      not_quiet("foreign process " + std::to_string(p.pid) + " (" + p.comm + ") uses " +
                format_percent(p.cpu_percent, false) + " of a core > " +
                format_percent(t.max_foreign_process_cpu_percent, false));
    }
  }
  for (const auto& d : in.gpu.devices) {
    const std::string gpu = "GPU " + std::to_string(d.index);
    if (!t.allow_foreign_gpu_processes && !d.compute_processes.empty()) {
      not_quiet(gpu + " has " + std::to_string(d.compute_processes.size()) + " foreign compute process(es), first pid " +
                std::to_string(d.compute_processes.front().pid));
    }
    if (d.utilization_gpu_percent > t.max_gpu_utilization_percent) {
      not_quiet(gpu + " utilisation " + format_percent(d.utilization_gpu_percent, false) + " > " +
                format_percent(t.max_gpu_utilization_percent, false));
    }
    if (d.temperature_c > t.max_gpu_temperature_c) {
      not_quiet(gpu + " temperature " + std::to_string(d.temperature_c) + " C > " + fmt(t.max_gpu_temperature_c) + " C");
    }
    if (d.clocks_event_reasons_known && has_any_reason(d.clocks_event_reasons, t.slowdown_reasons)) {
      std::string names;
      for (const auto& n : decode_clocks_event_reasons(d.clocks_event_reasons)) names += (names.empty() ? "" : ",") + n;
      not_quiet(gpu + " clocks held down: " + names);
    }
  }
  return r;
}

std::vector<ProcStat> snapshot_processes() {
  std::vector<ProcStat> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    if (const auto text = read_small_file(entry.path() / "stat")) {
      if (auto p = parse_proc_stat(*text)) out.push_back(std::move(*p));
    }
  }
  return out;
}

QuietBoxInputs probe_quiet_box(const QuietBoxThresholds& t) {
  QuietBoxInputs in;
  in.load = parse_loadavg(read_file("/proc/loadavg"));
  in.cores = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  const auto before = snapshot_processes();
  const auto t0 = now_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(t.sample_window_ms));
  const auto after = snapshot_processes();
  const double window_s = static_cast<double>(now_ns() - t0) * 1e-9;
  in.busiest = busiest_foreign_processes(before, after, window_s, ::sysconf(_SC_CLK_TCK), static_cast<int>(::getpid()), 5);
  // Checked before this process creates a CUDA context, so every compute process is foreign.
  in.gpu = probe_gpu(true);
  return in;
}

QuietBoxReport check_quiet_box(const QuietBoxThresholds& t) { return evaluate_quiet_box(probe_quiet_box(t), t); }

QuietBoxReport settle_quiet_box(const QuietBoxThresholds& t, const std::function<void(const QuietBoxReport&)>& on_wait) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(t.settle_max_s);
  QuietBoxReport r = check_quiet_box(t);
  while (!r.quiet && std::chrono::steady_clock::now() < deadline) {
    if (on_wait) on_wait(r);
    std::this_thread::sleep_for(std::chrono::seconds(5));
    r = check_quiet_box(t);
  }
  return r;
}

nlohmann::json to_json(const QuietBoxReport& r) {
  nlohmann::json gpu;
  if (r.inputs.gpu.available) {
    gpu = nlohmann::json::array();
    for (const auto& d : r.inputs.gpu.devices) gpu.push_back(to_json(d));
  } else {
    gpu = {{"status", "n/a"}, {"reason", r.inputs.gpu.na_reason}};
  }
  const auto& t = r.thresholds;
  return {{"quiet", r.quiet},
          {"reasons", r.reasons},
          {"cpu",
           {{"load1", r.inputs.load.load1},
            {"load5", r.inputs.load.load5},
            {"load15", r.inputs.load.load15},
            {"runnable", r.inputs.load.runnable},
            {"cores", r.inputs.cores},
            {"load_per_core", r.load_per_core},
            {"busiest_foreign_processes", busiest_json(r.inputs.busiest)}}},
          {"gpu", gpu},
          {"thresholds",
           {{"max_load_per_core", t.max_load_per_core},
            {"max_foreign_process_cpu_percent", t.max_foreign_process_cpu_percent},
            {"max_gpu_utilization_percent", t.max_gpu_utilization_percent},
            {"max_gpu_temperature_c", t.max_gpu_temperature_c},
            {"allow_foreign_gpu_processes", t.allow_foreign_gpu_processes},
            {"slowdown_reasons", t.slowdown_reasons}}}};
}

nlohmann::json to_json(const MonitorWindow& w) {
  nlohmann::json j = {{"samples", w.samples},
                      {"slowdown_samples", w.slowdown_samples},
                      {"slowdown_reasons_seen", w.slowdown_reasons_seen},
                      {"min_sm_clock_mhz", w.min_sm_clock_mhz < 0 ? nlohmann::json(nullptr) : nlohmann::json(w.min_sm_clock_mhz)},
                      {"window_s", w.window_s},
                      {"busiest_foreign_processes", busiest_json(w.busiest)}};
  if (!w.gpu_na_reason.empty()) j["gpu"] = {{"status", "n/a"}, {"reason", w.gpu_na_reason}};
  return j;
}

QuietBoxMonitor::QuietBoxMonitor(QuietBoxThresholds t) : t_(std::move(t)) { nvml_ = Nvml::load(nvml_why_); }

QuietBoxMonitor::~QuietBoxMonitor() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
}

void QuietBoxMonitor::start() {
  if (running_) return;
  window_ = MonitorWindow{};
  if (!nvml_) window_.gpu_na_reason = nvml_why_;
  procs_before_ = snapshot_processes();
  t_start_ns_ = now_ns();
  running_ = true;
  if (nvml_) thread_ = std::thread([this] { loop(); });
}

void QuietBoxMonitor::loop() {
  const unsigned n = nvml_->device_count();
  while (running_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      bool slowed = false;
      for (unsigned i = 0; i < n; ++i) {
        const auto s = nvml_->clocks(i);
        if (s.sm_clock_mhz >= 0 && (window_.min_sm_clock_mhz < 0 || s.sm_clock_mhz < window_.min_sm_clock_mhz)) {
          window_.min_sm_clock_mhz = s.sm_clock_mhz;
        }
        if (s.clocks_event_reasons_known && has_any_reason(s.clocks_event_reasons, t_.slowdown_reasons)) {
          slowed = true;
          for (const auto& name : decode_clocks_event_reasons(s.clocks_event_reasons)) {
            if (!has_any_reason(clocks_event_reason_bit(name), t_.slowdown_reasons)) continue;
            auto& seen = window_.slowdown_reasons_seen;
            if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
          }
        }
      }
      ++window_.samples;
      if (slowed) ++window_.slowdown_samples;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(t_.monitor_interval_ms));
  }
}

MonitorWindow QuietBoxMonitor::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
  const auto after = snapshot_processes();
  std::lock_guard<std::mutex> lock(mu_);
  window_.window_s = static_cast<double>(now_ns() - t_start_ns_) * 1e-9;
  window_.busiest = busiest_foreign_processes(procs_before_, after, window_.window_s, ::sysconf(_SC_CLK_TCK),
                                              static_cast<int>(::getpid()), 5);
  return window_;
}

}  // namespace atlas::gates
