// atlas-bench nightly [--shard i/N]: one shard of the nightly suites (runs/nightly_shard.hpp).
// Exit codes as `gate`; without a baseline the shard is recorded, not judged.
#include <iostream>
#include <memory>

#include "runs/nightly_shard.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/atlas-bench/gate_options.hpp"

namespace {

using namespace atlas;

const cli::RegisterCommand kRegister({
    "nightly",
    "Run one shard (--shard i/N, 0-based) of the nightly suites and write a shard record",
    [](CLI::App& sub, const cli::GlobalOptions& global) -> std::function<int()> {
      auto o = std::make_shared<runs::NightlyShardOptions>();
      // Top-level options (--data-dir) given after the subcommand still reach the top level.
      sub.fallthrough();
      sub.add_option("--shard", o->shard, "Slice i/N of the nightly suite list (0 <= i < N)")->capture_default_str();
      cli::add_gate_command_options(sub, o->common);
      return [o, &global] { return runs::run_nightly_shard(*o, cli::run_context(global), std::cout); };
    },
});

}  // namespace
