// atlas-bench: the CLI entry point. Exit codes: 0 pass, 1 regression, 2 inconclusive,
// 3 usage or input error, 4 a failure of the machine or the program (common/exit_code.hpp);
// 130 / 143 stopped by SIGINT / SIGTERM (common/termination.hpp).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/build_commit.hpp"
#include "common/data_dir.hpp"
#include "common/exit_code.hpp"
#include "common/termination.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/cli_parse.hpp"

namespace atlas::cli {

std::vector<Command>& command_registry() {
  static std::vector<Command> registry;
  return registry;
}

std::string resolve_data_dir(const GlobalOptions& g) { return atlas::resolve_data_dir(g.data_dir).string(); }

}  // namespace atlas::cli

int main(int argc, char** argv) {
  using namespace atlas::cli;
  // `--pull-request-gate-check` is the engine teams' entry point: it is the `gate` command
  // (default gate "pr"), spelled as a top-level flag.
  std::vector<std::string> args(argv, argv + argc);
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--pull-request-gate-check") {
      args.erase(args.begin() + static_cast<long>(i));
      args.insert(args.begin() + 1, "gate");
      break;
    }
  }
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());

  CLI::App app{"atlas-bench: LLM inference benchmarks and regression gates"};
  app.require_subcommand(1);
  // Global options are accepted before or after the subcommand (`atlas-bench run --data-dir X`):
  // an option a subcommand does not know falls through to its parent. Subcommands inherit this
  // setting when created, so every command and nested command (`baseline show`) gets it.
  app.fallthrough();
  GlobalOptions global;
  global.argv.assign(argv, argv + argc);
  app.add_option("--data-dir", global.data_dir, "Data directory holding models/ and bfcl/ (env ATLAS_DATA_DIR)");
  // The build's commit is part of the version: the gate reads it back from a --base-bin binary.
  app.set_version_flag("--version", "atlas-bench 0.1.0 (" + atlas::build_commit_text() + ")");
  app.footer(
      "Global options may also follow the command name: atlas-bench run --data-dir DIR ...\n\n"
      "--pull-request-gate-check [GATE OPTIONS]\n"
      "  The pull-request gate: the same as `atlas-bench gate` (gate \"pr\"); its options, e.g.\n"
      "  --inject-decode-delay-us N (a planted slowdown the gate must catch), are `gate --help`'s.");

  std::vector<std::function<int()>> actions(command_registry().size());
  std::vector<CLI::App*> subs;
  for (std::size_t i = 0; i < command_registry().size(); ++i) {
    const auto& c = command_registry()[i];
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    // Before setup: nested commands (`baseline show`) copy their parent's footer when created,
    // so they get this line rather than the top-level page's footer.
    sub->footer("Global options, here or before the command name: --data-dir DIR (models/ and bfcl/; env ATLAS_DATA_DIR)");
    actions[i] = c.setup(*sub, global);
    subs.push_back(sub);
  }
  if (const auto code = parse_or_exit_code(app, static_cast<int>(cargv.size()), cargv.data())) return *code;
  // SIGINT / SIGTERM / SIGHUP stop the child processes (the merge-base compile, callgrind, the
  // timed gate's sides), remove temporary folders and exit 128 + the signal.
  atlas::termination::install();
  try {
    for (std::size_t i = 0; i < subs.size(); ++i) {
      if (subs[i]->parsed()) return actions[i]();
    }
  } catch (...) {
    return atlas::exit_code_of_current_exception("atlas-bench");
  }
  return atlas::to_int(atlas::ExitCode::input_error);
}
