#pragma once
// The command-line parse shared by atlas-bench and atlas-serve: CLI11's own exit codes (105 for
// a bad option value, 109 for an extra argument, ...) become the project's (README, "Exit
// codes"): 0 after --help or --version, 3 on any usage error, its message printed by CLI11.
#include <optional>

#include <CLI/CLI.hpp>

#include "common/exit_code.hpp"

namespace atlas::cli {

/// Parses argv into `app`. Empty when the command should run; otherwise the exit code to return
/// at once: 0 after --help / --version (printed), 3 after a usage error (printed on stderr).
inline std::optional<int> parse_or_exit_code(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    // --help, --help-all and --version are "errors" whose code is Success.
    return app.exit(e) == static_cast<int>(CLI::ExitCodes::Success) ? 0 : to_int(ExitCode::input_error);
  }
}

}  // namespace atlas::cli
