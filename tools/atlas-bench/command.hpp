#pragma once
// Command registry: each cmd_*.cpp registers one subcommand at static-initialisation time, so
// adding a command never touches main.cpp. Commands hold no logic a test would want: they
// parse options and call library functions.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace atlas::cli {

/// Options every command may read (set on the top-level app).
struct GlobalOptions {
  std::string data_dir;  ///< --data-dir / ATLAS_DATA_DIR
  std::vector<std::string> argv;  ///< the command line as typed (records keep it)
};

/// Configures `sub` (options, flags) and returns the action to run after parsing; the action
/// returns the process exit code (atlas::ExitCode).
using CommandSetup = std::function<std::function<int()>(CLI::App& sub, const GlobalOptions& global)>;

struct Command {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<Command>& command_registry();

struct RegisterCommand {
  explicit RegisterCommand(Command c) { command_registry().push_back(std::move(c)); }
};

/// The data directory: --data-dir, else the order of atlas::resolve_data_dir (common/data_dir.hpp).
std::string resolve_data_dir(const GlobalOptions& g);

}  // namespace atlas::cli
