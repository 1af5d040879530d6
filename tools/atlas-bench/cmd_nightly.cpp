// atlas-bench nightly [--shard i/N]: run a deterministic slice of the nightly suite list (so a
// CI matrix, Slurm array or Kubernetes indexed job spreads it), judge that slice against the
// nightly BASELINE when one exists, and write a shard record; `atlas-bench records merge`
// combines the shards. Exit codes as `gate`; without a baseline the shard is recorded, not judged.
#include "common/build_paths.hpp"
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/exit_code.hpp"
#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/shard.hpp"
#include "gates/text_printer.hpp"
#include "records/provenance.hpp"
#include "records/store.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/atlas-bench/gate_command.hpp"

namespace {

namespace fs = std::filesystem;
using namespace atlas;
using namespace atlas::gates;

struct Options {
  cli::GateCommandOptions common{"nightly"};
  std::string shard = "0/1";
};

// The baseline restricted to the suites this shard runs (the others are another shard's job).
Baseline slice_of(const Baseline& b, const std::vector<std::string>& suites) {
  Baseline out = b;
  out.metrics.clear();
  for (const auto& [key, m] : b.metrics) {
    const auto suite = split_metric_key(key).first;
    if (std::find(suites.begin(), suites.end(), suite) != suites.end()) out.metrics.emplace(key, m);
  }
  return out;
}

int run(const Options& o, const cli::GlobalOptions& global) {
  const cli::GateCommandOptions& c = o.common;
  GateConfig cfg = load_gate_config(gate_config_path(c.gate, c.config, ATLAS_SOURCE_DIR));
  const std::vector<std::string> all_suites = cfg.suites;
  const Shard shard = parse_shard(o.shard);
  cfg.suites = shard_slice(cfg.suites, shard);
  const std::string shard_text = std::to_string(shard.index) + "/" + std::to_string(shard.count);
  if (cfg.suites.empty()) {
    std::cout << "shard " << shard_text << ": no suites in this slice\n";
    return 0;
  }
  const records::MachineInfo machine = cli::gate_machine(c.engine.backend, c.machine_class);
  const fs::path baseline_file = baseline_path(c.baselines_dir, machine.machine_class, cfg.gate);
  const bool judged = fs::exists(baseline_file);
  const Baseline baseline = judged ? slice_of(load_baseline(baseline_file), cfg.suites) : Baseline{};

  cli::JudgedRun run = cli::run_judged(c, cfg, baseline, machine, global);
  const GateDecision decision = decide(run.outcome, true, run.quiet.quiet, c.allow_noisy);

  records::Record& record = run.outcome.record;
  // Shards of one run must agree on the top-level config for `records merge`, so config holds
  // the whole nightly suite list and the shard's own slice goes with its (per-shard) verdicts.
  record.config["suites"] = all_suites;
  record.verdicts["shard"] = {{"index", shard.index}, {"count", shard.count}, {"suites", cfg.suites}};
  record.verdicts["overall"] = judged ? to_string(decision.overall) : "not judged";
  record.verdicts["reasons"] = decision.reasons;
  record.verdicts["baseline_file"] = judged ? baseline_file.string() : "";
  const fs::path record_file = records::write_to_store(record, c.store);
  std::cout << "shard " << shard_text << " ran";
  for (const auto& s : cfg.suites) std::cout << " " << s;
  std::cout << "\nrecord: " << record_file.string() << "\n";
  if (!judged) {
    std::cout << "no baseline " << baseline_file.string() << ": recorded, not judged\n";
    return 0;
  }
  TextPrinter{}.print(cli::gate_report(cfg.gate + " shard " + shard_text, machine, baseline_file, record_file, run, decision),
                      std::cout);
  return to_int(exit_code(decision.overall));
}

const cli::RegisterCommand kRegister({
    "nightly",
    "Run one shard (--shard i/N, 0-based) of the nightly suites and write a shard record",
    [](CLI::App& sub, const cli::GlobalOptions& global) -> std::function<int()> {
      auto o = std::make_shared<Options>();
      // Top-level options (--data-dir) given after the subcommand still reach the top level.
      sub.fallthrough();
      sub.add_option("--shard", o->shard, "Slice i/N of the nightly suite list (0 <= i < N)")->capture_default_str();
      cli::add_gate_command_options(sub, o->common);
      return [o, &global] { return run(*o, global); };
    },
});

}  // namespace
