// atlas-bench quiet-box: is this machine quiet enough to time things? Exit 0 quiet, 2 not.
#include "common/build_paths.hpp"
#include <iostream>
#include <thread>

#include "common/exit_code.hpp"
#include "gates/config.hpp"
#include "gates/quiet_box.hpp"
#include "tools/atlas-bench/command.hpp"

namespace {

struct Options {
  std::string gate = "pr";
  std::string config;
  bool json = false;
  int monitor_ms = 0;
};

int run(const Options& o) {
  using namespace atlas::gates;
  const auto cfg = load_gate_config(gate_config_path(o.gate, o.config, ATLAS_SOURCE_DIR));
  const auto report = check_quiet_box(cfg.quiet_box);
  nlohmann::json j = to_json(report);
  if (o.monitor_ms > 0) {
    QuietBoxMonitor monitor(cfg.quiet_box);
    monitor.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(o.monitor_ms));
    j["monitor"] = to_json(monitor.stop());
  }
  if (o.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    const auto& cpu = j["cpu"];
    std::cout << "load " << report.inputs.load.load1 << " on " << report.inputs.cores << " cores ("
              << report.load_per_core << " per core, max " << cfg.quiet_box.max_load_per_core << ")\n";
    for (const auto& p : cpu["busiest_foreign_processes"]) {
      std::cout << "  pid " << p["pid"] << " " << p["comm"].get<std::string>() << ": " << p["cpu_percent"].get<double>()
                << "% of a core\n";
    }
    if (!report.inputs.gpu.available) {
      std::cout << "gpu: n/a (" << report.inputs.gpu.na_reason << ")\n";
    } else {
      for (const auto& d : report.inputs.gpu.devices) std::cout << "gpu: " << to_json(d).dump() << "\n";
    }
    if (j.contains("monitor")) std::cout << "monitor: " << j["monitor"].dump() << "\n";
    for (const auto& why : report.reasons) std::cout << "not quiet: " << why << "\n";
    std::cout << (report.quiet ? "quiet" : "NOT quiet") << "\n";
  }
  return atlas::to_int(report.quiet ? atlas::ExitCode::pass : atlas::ExitCode::inconclusive);
}

const atlas::cli::RegisterCommand kRegister({
    "quiet-box",
    "Check that the box is quiet enough for timed gates (load, foreign processes, GPU state); exit 0 quiet, 2 not",
    [](CLI::App& sub, const atlas::cli::GlobalOptions&) -> std::function<int()> {
      auto o = std::make_shared<Options>();
      sub.add_option("--gate", o->gate, "Gate whose thresholds apply (gates/config/<gate>.json)")->capture_default_str();
      sub.add_option("--config", o->config, "Gate config file (overrides --gate)");
      sub.add_flag("--json", o->json, "Print the report as JSON");
      sub.add_option("--monitor-ms", o->monitor_ms, "Also run the in-run monitor for this many milliseconds")
          ->check(CLI::NonNegativeNumber);
      return [o] { return run(*o); };
    },
});

}  // namespace
