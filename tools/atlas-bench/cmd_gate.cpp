// atlas-bench gate (also `atlas-bench --pull-request-gate-check`): the pull-request gate
// (runs/pr_gate.hpp). Exit 0 pass, 1 regression, 2 inconclusive, 3 usage or input error, 4 a failure of
// the machine or the program (common/exit_code.hpp; README, "Exit codes").
#include <iostream>
#include <memory>

#include "runs/pr_gate.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/atlas-bench/gate_options.hpp"

namespace {

using namespace atlas;

const cli::RegisterCommand kRegister({
    "gate",
    "Run a gate's suites and judge them against the committed BASELINE (exit 0 pass, 1 regression, 2 inconclusive)",
    [](CLI::App& sub, const cli::GlobalOptions& global) -> std::function<int()> {
      auto o = std::make_shared<runs::PrGateOptions>();
      // main.cpp rewrites `atlas-bench --data-dir D --pull-request-gate-check` to
      // `atlas-bench gate --data-dir D`: top-level options must still reach the top level.
      sub.fallthrough();
      cli::add_gate_command_options(sub, o->common);
      sub.add_option("--inject-decode-delay-us", o->common.engine.inject_decode_delay_us,
                     "Test hook: sleep this many microseconds (fractions allowed) per decode step on the head side "
                     "only (gate self-test)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--base-bin", o->timed.base_bin,
                     "Base side of the timed and counted judgements: this atlas-bench binary (e.g. a CI artifact "
                     "built on the target branch) instead of building the merge-base; its --version must name the "
                     "merge-base commit and a clean tree, else exit 3");
      sub.add_option("--base-cache-dir", o->timed.base_cache_dir,
                     "Where merge-base builds are kept (default: $ATLAS_GATE_CACHE, else <build dir>/gate-base)");
      sub.add_option("--build-jobs", o->timed.build_jobs, "Parallel jobs for the merge-base build (default: cores)")
          ->check(CLI::NonNegativeNumber);
      sub.add_flag("--no-timed", o->no_timed, "Skip the timed judgement against the merge-base (timed metrics unjudged)");
      sub.add_flag("--timed-only", o->timed_only,
                   "Only the timed judgement against the merge-base (no in-process suites, no stored baseline)");
      sub.add_option("--inject-decode-work", o->common.engine.inject_decode_work,
                     "Test hook: run this many extra loop iterations per decoded token (the instruction count "
                     "must catch it)")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--summary-md", o->summary_md, "Write a markdown summary (PR comment) to this file");
      sub.add_option("--target-branch", o->target_branch,
                     "Branch for the merge-base check (default: the config's, origin/main falling back to main)");
      return [o, &global] { return runs::run_pr_gate(*o, cli::run_context(global), std::cout); };
    },
});

}  // namespace
