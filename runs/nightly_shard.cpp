#include "runs/nightly_shard.hpp"

#include <algorithm>
#include <filesystem>

#include "common/build_paths.hpp"
#include "common/exit_code.hpp"
#include "gates/baseline.hpp"
#include "gates/config.hpp"
#include "gates/printers/gate_printer.hpp"
#include "gates/shard.hpp"
#include "records/provenance.hpp"
#include "records/store.hpp"

namespace atlas::runs {
namespace {

namespace fs = std::filesystem;
using namespace atlas::gates;

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

}  // namespace

int run_nightly_shard(const NightlyShardOptions& o, const RunContext& ctx, std::ostream& out) {
  const GateRunOptions& c = o.common;
  GateConfig cfg = load_gate_config(gate_config_path(c.gate, c.config, build_source_dir()));
  const std::vector<std::string> all_suites = cfg.suites;
  const Shard shard = parse_shard(o.shard);
  cfg.suites = shard_slice(cfg.suites, shard);
  const std::string shard_text = std::to_string(shard.index) + "/" + std::to_string(shard.count);
  if (cfg.suites.empty()) {
    out << "shard " << shard_text << ": no suites in this slice\n";
    return 0;
  }
  const records::MachineInfo machine = gate_machine(c.engine.backend, c.machine_class);
  const fs::path baseline_file = baseline_path(c.baselines_dir, machine.machine_class, cfg.gate);
  const bool judged = fs::exists(baseline_file);
  const Baseline baseline = judged ? slice_of(load_baseline(baseline_file), cfg.suites) : Baseline{};

  JudgedRun run = run_judged(c, cfg, baseline, machine, ctx);
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
  out << "shard " << shard_text << " ran";
  for (const auto& s : cfg.suites) out << " " << s;
  out << "\nrecord: " << record_file.string() << "\n";
  if (!judged) {
    out << "no baseline " << baseline_file.string() << ": recorded, not judged\n";
    return 0;
  }
  make_text_printer()->print(gate_report(cfg.gate + " shard " + shard_text, machine, baseline_file, record_file, run, decision),
                      out);
  return to_int(exit_code(decision.overall));
}

}  // namespace atlas::runs
