#pragma once
// The flags `atlas-bench gate` and `atlas-bench nightly` share (the options themselves and what
// they do: runs/judged_run.hpp).
#include <CLI/CLI.hpp>

#include "runs/judged_run.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {

/// Registers --gate, --config, --backend, --model, --allow-noisy, --baselines-dir,
/// --machine-class and --store on `sub`.
void add_gate_command_options(CLI::App& sub, runs::GateRunOptions& o);

/// What a gate run reads from the top-level options: the data directory and the command line.
runs::RunContext run_context(const GlobalOptions& global);

}  // namespace atlas::cli
