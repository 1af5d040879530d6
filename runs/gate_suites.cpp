#include "runs/gate_suites.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "common/error.hpp"
#include "common/sha256.hpp"
#include "gates/nvml.hpp"
#include "records/provenance.hpp"
#include "suites/engine_target.hpp"
#include "suites/progress.hpp"
#include "suites/record_provenance.hpp"
#include "suites/runner.hpp"

namespace atlas::runs {

std::string default_gate_model(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "models" / "stories260K" / "stories260K.bin").string();
}

std::string model_to_open(const std::string& model, const std::string& data_dir) {
  const std::string path = model.empty() ? default_gate_model(data_dir) : model;
  // (A model may also be a Hugging Face directory or a "preset:<name>" spec: load_model decides.)
  if (path.rfind("preset:", 0) != 0 && !std::filesystem::exists(path))
    throw atlas::Error(path + ": no such model file or directory (give --model, or --data-dir / ATLAS_DATA_DIR " +
                       "holding models/stories260K/stories260K.bin)");
  return path;
}

records::MachineInfo gate_machine(const std::string& backend, const std::string& machine_class) {
  records::MachineInfo m = records::collect_machine();
  if (backend == "cuda") {
    std::string why;
    if (auto nvml = gates::Nvml::load(why); nvml && nvml->device_count() > 0) {
      const gates::GpuSnapshot s = nvml->snapshot(0, false);
      m.gpu_name = s.name;
      m.gpu_driver = nvml->driver_version();
      m.gpu_count = static_cast<int>(nvml->device_count());
      m.gpu_clocks = {{"sm_mhz", s.sm_clock_mhz}, {"sm_max_mhz", s.max_sm_clock_mhz}};
      m.machine_class = gates::gpu_machine_class(m.gpu_name, nvml->device_count());
    } else {
      std::cerr << "atlas-bench: no GPU machine class (" << why << "); using " << m.machine_class << "\n";
    }
  }
  if (!machine_class.empty() && machine_class != m.machine_class) {
    m.detected_machine_class = m.machine_class;
    m.machine_class = machine_class;
  }
  return m;
}

GateSuiteRunner::GateSuiteRunner(const EngineChoice& engine, const std::string& data_dir, const std::string& suite_config,
                                 const std::string& gate, const records::MachineInfo& machine)
    : config_(suites::load_suite_set_config(suite_config)), gate_(gate), data_dir_(data_dir), machine_(machine) {
  engine::EngineOptions options;
  options.model = engine.model.empty() ? default_gate_model(data_dir) : engine.model;
  suites::apply_engine_option(options, "backend", engine.backend);
  suites::apply_engine_option(options, "inject_decode_delay_us", std::to_string(engine.inject_decode_delay_us));
  suites::apply_engine_option(options, "inject_decode_work", std::to_string(engine.inject_decode_work));
  target_ = std::make_unique<suites::EngineTarget>(options);
  provenance_.emplace();
  suites::fill_model_provenance(*provenance_, *target_, data_dir_);
}

GateSuiteRunner::~GateSuiteRunner() = default;

records::Record GateSuiteRunner::run(int attempt, const std::vector<std::string>& suites) {
  auto progress = suites::make_progress(std::cerr, STDERR_FILENO);
  if (attempt > 0) {
    std::cerr << "attempt " << attempt + 1 << " (rerun or confirmation):";
    for (const auto& s : suites) std::cerr << " " << s;
    std::cerr << "\n";
  }
  suites::SuiteSetRequest req;
  req.suites = suites;
  req.config = config_;
  req.data_dir = data_dir_;
  req.progress = progress.get();
  records::Record r = suites::run_suite_set(*target_, req);
  r.gate_or_suite = gate_;
  r.git = records::collect_git(std::filesystem::current_path());
  r.build = records::build_info();
  r.machine = machine_;
  r.model = provenance_->model;
  for (const auto& [file, sha] : provenance_->data_assets) r.data_assets[file] = sha;
  r.config["engine"] = provenance_->config["engine"];
  r.config["env"] = suites::atlas_environment();  // test hooks set there must reach the record
  return r;
}

gates::QuietBoxReport gate_quiet_box(const gates::QuietBoxThresholds& thresholds, bool allow_noisy) {
  if (allow_noisy) return gates::check_quiet_box(thresholds);
  // One line when the wait starts, then one every 30 s with the time left (the check polls
  // every 5 s: a line per poll buried the gate's output on a busy box).
  const auto start = std::chrono::steady_clock::now();
  long last_printed = -1;
  return gates::settle_quiet_box(thresholds, [&](const gates::QuietBoxReport& r) {
    const long waited =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
    if (last_printed >= 0 && waited - last_printed < 30) return;
    last_printed = waited;
    const std::string why = r.reasons.empty() ? std::string("busy") : r.reasons.front();
    if (waited == 0)
      std::cerr << "quiet-box: waiting up to " << thresholds.settle_max_s << " s for the box to settle (" << why << ")\n";
    else
      std::cerr << "quiet-box: still waiting, " << waited << " s so far, at most "
                << std::max(0L, static_cast<long>(thresholds.settle_max_s) - waited) << " s left (" << why << ")\n";
  });
}

}  // namespace atlas::runs
