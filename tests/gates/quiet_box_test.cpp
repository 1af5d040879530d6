#include <doctest/doctest.h>

#include "common/number_format.hpp"
#include "gates/error.hpp"
#include "gates/monitor_guard.hpp"
#include "gates/nvml.hpp"
#include "gates/quiet_box.hpp"

using namespace atlas::gates;
using atlas::format_percent;

TEST_CASE("parse_loadavg reads /proc/loadavg text") {
  const auto l = parse_loadavg("1.52 0.98 0.40 3/977 123456\n");
  CHECK(l.load1 == 1.52);
  CHECK(l.load5 == 0.98);
  CHECK(l.load15 == 0.40);
  CHECK(l.runnable == 3);
  CHECK(l.total == 977);
  CHECK_THROWS_AS(parse_loadavg("garbage"), GateError);
}

TEST_CASE("parse_proc_stat handles comm with spaces and parentheses") {
  const auto p = parse_proc_stat("4242 (tricky (name) x) R 17 4242 4242 0 -1 4194560 100 0 0 0 250 40 0 0 20 0 1 0 100 0 0");
  REQUIRE(p);
  CHECK(p->pid == 4242);
  CHECK(p->comm == "tricky (name) x");
  CHECK(p->state == 'R');
  CHECK(p->ppid == 17);
  CHECK(p->utime == 250);
  CHECK(p->stime == 40);
  CHECK(!parse_proc_stat("4242 (truncated) R 1 2"));
  CHECK(!parse_proc_stat(""));
}

TEST_CASE("busiest_foreign_processes ranks CPU deltas and excludes self and descendants") {
  auto st = [](int pid, int ppid, unsigned long long ut, unsigned long long stime) {
    return *parse_proc_stat(std::to_string(pid) + " (p" + std::to_string(pid) + ") S " + std::to_string(ppid) +
                            " 0 0 0 0 0 0 0 0 0 " + std::to_string(ut) + " " + std::to_string(stime) + " 0 0");
  };
  // clk_tck 100, window 1 s: 100 ticks = 100 % of one core.
  const std::vector<ProcStat> before = {st(1, 0, 0, 0), st(10, 1, 1000, 0), st(20, 1, 500, 0), st(30, 1, 0, 0), st(31, 30, 0, 0)};
  const std::vector<ProcStat> after = {st(1, 0, 1, 0),     st(10, 1, 1040, 10), st(20, 1, 590, 0),
                                       st(30, 1, 90, 0),   st(31, 30, 95, 0),   st(32, 31, 99, 0), st(40, 1, 7, 0)};
  const auto top = busiest_foreign_processes(before, after, 1.0, 100, /*self=*/30, 3);
  REQUIRE(top.size() == 3);
  CHECK(top[0].pid == 20);  // 90 ticks
  CHECK(top[0].cpu_percent == doctest::Approx(90));
  CHECK(top[1].pid == 10);  // 50 ticks
  CHECK(top[2].pid == 40);  // new process: all 7 ticks
  for (const auto& p : top) CHECK(p.pid != 30);
}

TEST_CASE("clocks-event reasons decode thermal and power slowdown bits") {
  CHECK(decode_clocks_event_reasons(0) == std::vector<std::string>{});
  CHECK(decode_clocks_event_reasons(0x1) == std::vector<std::string>{"gpu_idle"});
  CHECK(decode_clocks_event_reasons(0x40 | 0x4) == std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"});
  CHECK(decode_clocks_event_reasons(0x1000) == std::vector<std::string>{"bit_0x1000"});
  const std::vector<std::string> slowdowns = {"sw_thermal_slowdown", "hw_thermal_slowdown"};
  CHECK(has_any_reason(0x20, slowdowns));
  CHECK(!has_any_reason(0x1, slowdowns));
  CHECK(clocks_event_reason_bit("hw_power_brake_slowdown") == 0x80);
}

TEST_CASE("evaluate_quiet_box: thresholds on load, foreign CPU and GPU state") {
  QuietBoxThresholds t;
  QuietBoxInputs in;
  in.load = parse_loadavg("0.40 0.40 0.40 1/100 1");
  in.cores = 2;
  in.gpu.na_reason = "libnvidia-ml.so.1: cannot open shared object file";
  auto r = evaluate_quiet_box(in, t);
  CHECK(r.quiet);
  CHECK(r.load_per_core == doctest::Approx(0.2));
  CHECK(to_json(r)["gpu"]["status"] == "n/a");

  in.load.load1 = 3.0;
  in.busiest = {{77, "stress", 95.0}};
  r = evaluate_quiet_box(in, t);
  CHECK(!r.quiet);
  REQUIRE(r.reasons.size() == 2);
  CHECK(r.reasons[0].find("per core > 0.5") != std::string::npos);
  CHECK(r.reasons[1].find("77 (stress)") != std::string::npos);
  // Percentages as every printer writes them (common/number_format.hpp).
  CHECK(r.reasons[1].find("uses 95.00% of a core > " + format_percent(t.max_foreign_process_cpu_percent, false)) !=
        std::string::npos);

  QuietBoxInputs gpu_in;
  gpu_in.cores = 8;
  gpu_in.gpu.available = true;
  GpuSnapshot d;
  d.utilization_gpu_percent = 0;
  d.temperature_c = 40;
  d.clocks_event_reasons = 0x1;  // idle: fine
  d.clocks_event_reasons_known = true;
  gpu_in.gpu.devices = {d};
  CHECK(evaluate_quiet_box(gpu_in, t).quiet);
  gpu_in.gpu.devices[0].clocks_event_reasons = 0x40;
  gpu_in.gpu.devices[0].compute_processes = {{999, 1 << 20}};
  gpu_in.gpu.devices[0].temperature_c = 90;
  r = evaluate_quiet_box(gpu_in, t);
  CHECK(!r.quiet);
  CHECK(r.reasons.size() == 3);
  gpu_in.gpu.devices[0] = d;
  gpu_in.gpu.devices[0].utilization_gpu_percent = 100;
  r = evaluate_quiet_box(gpu_in, t);
  REQUIRE(r.reasons.size() == 1);
  CHECK(r.reasons[0] == "GPU 0 utilisation 100.00% > " + format_percent(t.max_gpu_utilization_percent, false));
}

TEST_CASE("probe on this machine: NVML absence is reported, not fatal") {
  QuietBoxThresholds t;
  t.sample_window_ms = 20;
  const auto r = check_quiet_box(t);
  CHECK(r.inputs.cores >= 1);
  if (!r.inputs.gpu.available) CHECK(!r.inputs.gpu.na_reason.empty());
  QuietBoxMonitor m(t);
  m.start();
  const auto w = m.stop();
  CHECK(w.window_s >= 0);
  CHECK(!w.throttled());
}

TEST_CASE("drop_reason names the slowdown reasons and counts samples") {
  MonitorWindow w;
  w.samples = 10;
  CHECK(!drop_reason(w));
  w.slowdown_samples = 3;
  w.slowdown_reasons_seen = {"sw_power_cap", "hw_thermal_slowdown"};
  CHECK(*drop_reason(w) == "clocks held down (sw_power_cap,hw_thermal_slowdown) in 3 of 10 monitor samples");
}

TEST_CASE("gpu_machine_class names baseline folders from NVML device names") {
  CHECK(gpu_machine_class("NVIDIA H200") == "h200");
  CHECK(gpu_machine_class("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3");
  CHECK(gpu_machine_class("NVIDIA H200", 8) == "h200-x8");
  CHECK(gpu_machine_class("Tesla V100-SXM2-16GB") == "tesla-v100-sxm2-16gb");
  CHECK(gpu_machine_class("") == "gpu");
}
