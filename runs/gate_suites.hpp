#pragma once
// The suites side of `atlas-bench gate` and `atlas-bench nightly`: opens the in-process engine
// once and runs the requested suites on it per attempt (the callback gates::run_gate calls),
// stamping each record with git/build/machine/model provenance. Gates never run a model; this
// layer does it for them.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gates/quiet_box.hpp"
#include "records/record.hpp"
#include "suites/suite_config.hpp"

namespace atlas::suites {
class EngineTarget;
}

namespace atlas::runs {

struct EngineChoice {
  std::string backend = "cpu";
  std::string model;                ///< "" = <data-dir>/models/stories260K/stories260K.bin
  double inject_decode_delay_us = 0;  ///< test hook: sleeps per decode step (gate self-test); head side only
  int inject_decode_work = 0;         ///< test hook: extra loop iterations per decoded token
};

/// The model a gate runs when none is given: stories260K under the data directory.
std::string default_gate_model(const std::string& data_dir);
/// `model` when given, else the default model under `data_dir`. A model path that does not exist
/// (presets "preset:<name>" excepted) throws atlas::Error naming it and how to point at one:
/// checked before any wait or load.
std::string model_to_open(const std::string& model, const std::string& data_dir);

/// This machine as a gate (and `run`) sees it: records::collect_machine(), and for the cuda
/// backend the GPU name, count, driver, clocks and a GPU machine class from NVML ("h200",
/// "h200-x8"); `machine_class` (when not empty) overrides the class, and when it differs the
/// detected one is kept in detected_machine_class.
records::MachineInfo gate_machine(const std::string& backend, const std::string& machine_class);

class GateSuiteRunner {
 public:
  /// Throws engine/suites errors (exit 3) for a bad model, backend or suite config.
  GateSuiteRunner(const EngineChoice& engine, const std::string& data_dir, const std::string& suite_config,
                  const std::string& gate, const records::MachineInfo& machine);
  ~GateSuiteRunner();

  /// Runs `suites` once and returns the stamped record.
  records::Record run(int attempt, const std::vector<std::string>& suites);
  /// The model block records get (path relative to the data directory, format, sha256, ...).
  const records::ModelInfo& model() const { return provenance_->model; }

 private:
  std::unique_ptr<suites::EngineTarget> target_;
  suites::SuiteSetConfig config_;
  std::string gate_;
  std::string data_dir_;  ///< passed to suites that read data (bfcl)
  records::MachineInfo machine_;
  /// Model block, data assets and config.engine (hashing a large model once is enough).
  std::optional<records::Record> provenance_;
};

/// The box report a gate judges with: with --allow-noisy the verdict does not depend on the box,
/// so it is probed once; otherwise it waits up to thresholds.settle_max_s for the box to quiet
/// down, saying on stderr why it is still busy.
gates::QuietBoxReport gate_quiet_box(const gates::QuietBoxThresholds& thresholds, bool allow_noisy);

}  // namespace atlas::runs
