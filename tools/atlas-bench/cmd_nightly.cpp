// atlas-bench nightly [--shard i/N]: run a deterministic slice of the nightly suite list (so a
// CI matrix, Slurm array or Kubernetes indexed job spreads it), judge that slice against the
// nightly BASELINE when one exists, and write a shard record; `atlas-bench records merge`
// combines the shards. Exit codes as `gate`; without a baseline the shard is recorded, not judged.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "common/exit_code.hpp"
#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/gate_run.hpp"
#include "gates/monitor_guard.hpp"
#include "gates/quiet_box.hpp"
#include "gates/shard.hpp"
#include "gates/text_printer.hpp"
#include "records/provenance.hpp"
#include "records/store.hpp"
#include "tools/atlas-bench/command.hpp"
#include "tools/atlas-bench/gate_suites.hpp"

namespace {

namespace fs = std::filesystem;
using namespace atlas;
using namespace atlas::gates;

struct Options {
  std::string gate = "nightly";
  std::string config;
  std::string shard = "0/1";
  cli::EngineChoice engine;
  bool allow_noisy = false;
  std::string baselines_dir = "baselines";
  std::string machine_class;
  std::string store = ".benchmarks";
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
  GateConfig cfg = load_gate_config(gate_config_path(o.gate, o.config, ATLAS_SOURCE_DIR));
  const std::vector<std::string> all_suites = cfg.suites;
  const Shard shard = parse_shard(o.shard);
  cfg.suites = shard_slice(cfg.suites, shard);
  const std::string shard_text = std::to_string(shard.index) + "/" + std::to_string(shard.count);
  if (cfg.suites.empty()) {
    std::cout << "shard " << shard_text << ": no suites in this slice\n";
    return 0;
  }
  const records::MachineInfo machine = cli::gate_machine(o.engine.backend, o.machine_class);
  const fs::path baseline_file = baseline_path(o.baselines_dir, machine.machine_class, cfg.gate);
  const bool judged = fs::exists(baseline_file);
  const Baseline baseline = judged ? slice_of(load_baseline(baseline_file), cfg.suites) : Baseline{};

  const QuietBoxReport quiet = cli::gate_quiet_box(cfg.quiet_box, o.allow_noisy);
  cli::GateSuiteRunner runner(o.engine, cli::resolve_data_dir(global), cfg.suite_config, cfg.gate, machine);
  MonitorAttemptGuard guard(cfg.quiet_box);
  GateOutcome outcome = run_gate(
      cfg, baseline, [&runner](int attempt, const std::vector<std::string>& s) { return runner.run(attempt, s); }, &guard);
  const GateDecision decision = decide(outcome, true, quiet.quiet, o.allow_noisy);

  records::Record& record = outcome.record;
  record.gate_or_suite = cfg.gate;
  // Shards of one run must agree on the top-level config for `records merge`, so config holds
  // the whole nightly suite list and the shard's own slice goes with its (per-shard) verdicts.
  record.config["suites"] = all_suites;
  record.verdicts["shard"] = {{"index", shard.index}, {"count", shard.count}, {"suites", cfg.suites}};
  record.quiet_box = {{"before", to_json(quiet)}, {"during", guard.report()}, {"allow_noisy", o.allow_noisy}};
  record.verdicts["overall"] = judged ? to_string(decision.overall) : "not judged";
  record.verdicts["reasons"] = decision.reasons;
  record.verdicts["baseline_file"] = judged ? baseline_file.string() : "";
  const fs::path record_file = records::write_to_store(record, o.store);
  std::cout << "shard " << shard_text << " ran";
  for (const auto& s : cfg.suites) std::cout << " " << s;
  std::cout << "\nrecord: " << record_file.string() << "\n";
  if (!judged) {
    std::cout << "no baseline " << baseline_file.string() << ": recorded, not judged\n";
    return 0;
  }
  GateReport report;
  report.gate = cfg.gate + " shard " + shard_text;
  report.machine_class = machine.machine_class;
  report.baseline_file = baseline_file.string();
  report.commit = record.git.commit;
  report.record_file = record_file.string();
  report.comparison = outcome.comparison;
  report.decision = decision;
  report.box_quiet = quiet.quiet;
  report.quiet_box_reasons = quiet.reasons;
  report.attempts = outcome.attempts;
  TextPrinter{}.print(report, std::cout);
  return to_int(exit_code(decision.overall));
}

const cli::RegisterCommand kRegister({
    "nightly",
    "Run one shard (--shard i/N, 0-based) of the nightly suites and write a shard record",
    [](CLI::App& sub, const cli::GlobalOptions& global) -> std::function<int()> {
      auto o = std::make_shared<Options>();
      // main.cpp rewrites `atlas-bench --data-dir D --pull-request-gate-check` to
      // `atlas-bench gate --data-dir D`: top-level options must still reach the top level.
      sub.fallthrough();
      sub.add_option("--shard", o->shard, "Slice i/N of the nightly suite list (0 <= i < N)")->capture_default_str();
      sub.add_option("--gate", o->gate, "Gate config name")->capture_default_str();
      sub.add_option("--config", o->config, "Gate config file (overrides --gate)");
      sub.add_option("--backend", o->engine.backend, "Engine backend")
          ->check(CLI::IsMember({"cpu", "cuda"}))
          ->capture_default_str();
      sub.add_option("--model", o->engine.model, "Model path (default: stories260K from the data directory)");
      sub.add_flag("--allow-noisy", o->allow_noisy, "Judge even when the box is not quiet");
      sub.add_option("--baselines-dir", o->baselines_dir, "Folder of <machine-class>/<gate>.BASELINE.json")
          ->capture_default_str();
      sub.add_option("--machine-class", o->machine_class, "Machine class naming the baseline folder (default: detected)");
      sub.add_option("--store", o->store, "Records store")->capture_default_str();
      return [o, &global] { return run(*o, global); };
    },
});

}  // namespace
