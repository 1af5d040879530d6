#include "tools/atlas-bench/gate_options.hpp"

namespace atlas::cli {

void add_gate_command_options(CLI::App& sub, runs::GateRunOptions& o) {
  sub.add_option("--gate", o.gate, "Gate name: gates/config/<gate>.json")->capture_default_str();
  sub.add_option("--config", o.config, "Gate config file (overrides --gate)");
  sub.add_option("--backend", o.engine.backend, "Engine backend")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub.add_option("--model", o.engine.model, "Model path (default: stories260K from the data directory)");
  sub.add_flag("--allow-noisy", o.allow_noisy, "Judge even when the box is not quiet (the record says so)");
  sub.add_option("--baselines-dir", o.baselines_dir, "Folder of <machine-class>/<gate>.BASELINE.json")
      ->capture_default_str();
  sub.add_option("--machine-class", o.machine_class, "Machine class naming the baseline folder (default: detected; another "
                 "class than the detected one is kept in the record and said beside a gate's verdict)");
  sub.add_option("--store", o.store, "Records store")->capture_default_str();
}

runs::RunContext run_context(const GlobalOptions& global) { return {resolve_data_dir(global), global.argv}; }

}  // namespace atlas::cli
