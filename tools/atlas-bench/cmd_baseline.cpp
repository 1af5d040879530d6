// atlas-bench baseline show|init|ratchet|accept|freeze|unfreeze: inspect and move BASELINE files
// (baselines/<machine-class>/<gate>.BASELINE.json). Every move writes a history entry; see
// docs/gates.md.
#include "common/build_paths.hpp"
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "common/exit_code.hpp"
#include "common/number_format.hpp"
#include "gates/accept.hpp"
#include "gates/baseline.hpp"
#include "gates/baseline_lock.hpp"
#include "gates/config.hpp"
#include "gates/error.hpp"
#include "gates/history_check.hpp"
#include "gates/ratchet.hpp"
#include "gates/report.hpp"
#include "records/pick.hpp"
#include "records/provenance.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "tools/atlas-bench/command.hpp"

namespace {

namespace fs = std::filesystem;
using namespace atlas;
using namespace atlas::gates;

struct Options {
  std::string gate = "pr";
  bool gate_given = false;  ///< --gate on the command line (not the default)
  std::string config;
  std::string baselines_dir = "baselines";
  std::string machine_class;
  std::string store = ".benchmarks";
  std::string record;
  std::string metric;
  std::vector<std::string> metrics;  ///< accept: --metric (repeatable, or comma-separated)
  std::vector<std::string> suites;   ///< accept: --suite (every metric of the suite in the record)
  std::string reason;
  bool remove = false;
  bool force = false;
  bool json = false;
};

// The BASELINE file is named by the config's gate: a --gate that disagrees with the --config
// given would otherwise move the other gate's BASELINE without a word.
GateConfig config_of(const Options& o) {
  GateConfig cfg = load_gate_config(gate_config_path(o.gate, o.config, ATLAS_SOURCE_DIR));
  if (o.gate_given && !o.config.empty() && cfg.gate != o.gate)
    throw GateError("--gate " + o.gate + " disagrees with --config " + o.config + " (its field gate is \"" + cfg.gate +
                    "\", whose BASELINE would move): give a config of gate " + o.gate + ", or leave --gate out");
  return cfg;
}

// The record a move reads. A commit names its best record for this gate (records::pick_record:
// valid, no test hooks, this gate's own records first, a whole run, then the newest); the line
// printed says which file it was and why, so a later run that picks another is visible.
records::Record load_record(const Options& o) {
  if (o.record.empty()) throw GateError("--record is required (a record file or a commit-ish in " + o.store + ")");
  records::PickOptions pick;
  pick.repo_dir = fs::current_path();
  const auto picked = records::pick_record(o.record, o.store, pick, o.gate);
  std::cout << "record: " << picked.path.string() << ": " << picked.why << "\n";
  return records::read_record(picked.path);
}

std::string machine_class_of(const Options& o, const records::Record* r) {
  if (!o.machine_class.empty()) return o.machine_class;
  if (r && !r->machine.machine_class.empty()) return r->machine.machine_class;
  return records::collect_machine().machine_class;
}

ChangeStamp head_stamp() {
  return {records::git_rev_parse(fs::current_path(), "HEAD").value_or("unknown"), records::utc_now_iso()};
}

void print_baseline(const Baseline& b, const fs::path& path) {
  std::cout << path.string() << ": gate " << b.gate << ", machine class " << b.machine_class
            << (b.frozen ? ", FROZEN" : "") << ", " << b.metrics.size() << " metrics\n";
  int mismatched = 0;
  for (const auto& [key, m] : b.metrics) {
    if (const auto problem = history_mismatch(m); !problem.empty()) {
      ++mismatched;
      std::cout << "  WARNING " << key << ": " << problem << "\n";
    }
  }
  if (mismatched > 0)
    std::cout << "  " << mismatched << " metric(s) do not match their own history (listed above)\n";
  for (const auto& [key, m] : b.metrics) {
    std::cout << "  " << key << " = " << format_value(m.value, m.unit) << " " << m.unit << "  (" << records::to_string(m.kind)
              << ", " << records::to_string(m.better) << " is better, tolerance "
              << format_fraction_percent(m.tolerance.relative, false) << " / "
              << m.tolerance.absolute << " " << m.unit << ", " << m.samples.size() << " samples"
              << (m.frozen ? ", frozen" : "") << ")";
    if (!m.history.empty()) {
      const auto& h = m.history.back();
      std::cout << "  last: " << to_string(h.action) << " " << h.date << " " << h.commit.substr(0, 12) << " \""
                << h.reason << "\"";
    }
    std::cout << "\n";
  }
}

int show(const Options& o) {
  const auto path = baseline_path(o.baselines_dir, machine_class_of(o, nullptr), o.gate);
  const auto b = load_baseline(path);
  if (o.json) {
    std::cout << to_json(b).dump(2) << "\n";
  } else {
    print_baseline(b, path);
  }
  return 0;
}

int init(const Options& o) {
  const auto cfg = config_of(o);
  const auto rec = load_record(o);
  const auto cls = machine_class_of(o, &rec);
  const auto path = baseline_path(o.baselines_dir, cls, cfg.gate);
  const BaselineLock lock(path);
  if (fs::exists(path) && !o.force) {
    throw GateError(path.string() + " exists; use `baseline ratchet`/`accept`, or --force to start over (history is lost)");
  }
  const auto b = init_baseline(rec, cfg, cls, {rec.git.commit, records::utc_now_iso()},
                               o.reason.empty() ? "initial baseline from run " + rec.run_id : o.reason);
  save_baseline(path, b);
  std::cout << "wrote " << path.string() << " (" << b.metrics.size() << " metrics)\n";
  return 0;
}

int ratchet_cmd(const Options& o) {
  const auto cfg = config_of(o);
  const auto rec = load_record(o);
  const auto path = baseline_path(o.baselines_dir, machine_class_of(o, &rec), cfg.gate);
  const BaselineLock lock(path);  // read, change, write: one command at a time
  auto b = load_baseline(path);
  const auto res = ratchet(b, rec, cfg, {rec.git.commit, records::utc_now_iso()});
  auto value_of = [&](const std::string& k) { return format_value(b.metrics.at(k).value, b.metrics.at(k).unit); };
  for (const auto& k : res.tightened) std::cout << "tightened " << k << " -> " << value_of(k) << "\n";
  for (const auto& k : res.added) std::cout << "added " << k << " = " << value_of(k) << "\n";
  for (const auto& k : res.frozen) std::cout << "frozen, not moved: " << k << "\n";
  for (const auto& k : res.timed_not_stored)
    std::cout << "timed, not moved: " << k << " (machine class " << b.machine_class
              << " is not quiet: timed metrics are judged against the merge-base there)\n";
  if (res.tightened.empty() && res.added.empty()) {
    std::cout << "nothing to ratchet: no metric is significantly better\n";
    return 0;
  }
  save_baseline(path, b);
  std::cout << "wrote " << path.string() << "\n";
  return 0;
}

int accept_cmd(const Options& o) {
  const auto cfg = config_of(o);
  const AcceptRequest req{o.metrics, o.suites, o.reason, o.remove};
  check_accept_request(req);
  if (o.remove) {
    const auto path = baseline_path(o.baselines_dir, machine_class_of(o, nullptr), cfg.gate);
    const BaselineLock lock(path);
    auto b = load_baseline(path);
    remove_all(b, req, head_stamp());
    save_baseline(path, b);
    for (const auto& m : o.metrics) std::cout << "removed " << m << " from " << path.string() << "\n";
    return 0;
  }
  const auto rec = load_record(o);
  const auto path = baseline_path(o.baselines_dir, machine_class_of(o, &rec), cfg.gate);
  const BaselineLock lock(path);
  auto b = load_baseline(path);
  const auto keys = accept_all(b, req, rec, cfg, {rec.git.commit, records::utc_now_iso()});
  save_baseline(path, b);
  for (const auto& key : keys) {
    const auto& accepted = b.metrics.at(key);
    std::cout << "accepted " << key << " = " << format_value(accepted.value, accepted.unit);
    // The tolerance adopted from the config is said, and named in the history entry, so a
    // loosened tolerance is never a silent side effect of accepting a value.
    if (const auto& h = accepted.history.back(); h.tolerance)
      std::cout << ", tolerance relative " << h.tolerance->from.relative << " -> " << h.tolerance->to.relative
                << ", absolute " << h.tolerance->from.absolute << " -> " << h.tolerance->to.absolute;
    std::cout << "\n";
  }
  std::cout << keys.size() << " metric(s) accepted in " << path.string() << "\n";
  return 0;
}

int freeze_cmd(const Options& o, bool frozen) {
  const auto path = baseline_path(o.baselines_dir, machine_class_of(o, nullptr), o.gate);
  const BaselineLock lock(path);
  auto b = load_baseline(path);
  if (frozen) {
    freeze(b, o.metric, o.reason, head_stamp());
  } else {
    unfreeze(b, o.metric, o.reason, head_stamp());
  }
  save_baseline(path, b);
  std::cout << (frozen ? "froze " : "unfroze ") << (o.metric.empty() ? "the whole file" : o.metric) << " in "
            << path.string() << "\n";
  return 0;
}

void common_options(CLI::App& app, Options& o) {
  app.add_option("--gate", o.gate, "Gate name (pr, nightly)")->capture_default_str()->each([&o](const std::string&) {
    o.gate_given = true;
  });
  app.add_option("--baselines-dir", o.baselines_dir, "Folder holding <machine-class>/<gate>.BASELINE.json")
      ->capture_default_str();
  app.add_option("--machine-class", o.machine_class, "Machine class (default: the record's, else this machine's)");
}

void record_options(CLI::App& app, Options& o) {
  app.add_option("--record", o.record, "Record file, or a commit-ish whose newest record in the store is used");
  app.add_option("--store", o.store, "Records store")->capture_default_str();
  app.add_option("--config", o.config, "Gate config (default gates/config/<gate>.json): tolerances, alpha");
}

const atlas::cli::RegisterCommand kRegister({
    "baseline",
    "Show, initialise, ratchet, accept, freeze or unfreeze BASELINE files",
    [](CLI::App& sub, const atlas::cli::GlobalOptions&) -> std::function<int()> {
      auto o = std::make_shared<Options>();
      sub.require_subcommand(1);
      auto* show_cmd = sub.add_subcommand("show", "Print a BASELINE file");
      common_options(*show_cmd, *o);
      show_cmd->add_flag("--json", o->json, "Print the file's JSON");
      auto* init_cmd = sub.add_subcommand("init", "Create a BASELINE from a record (medians, samples, default tolerances)");
      common_options(*init_cmd, *o);
      record_options(*init_cmd, *o);
      init_cmd->add_option("--reason", o->reason, "History reason");
      init_cmd->add_flag("--force", o->force, "Overwrite an existing BASELINE (its history is lost)");
      auto* ratchet_sub = sub.add_subcommand("ratchet", "Tighten metrics the record is significantly better on; add new ones");
      common_options(*ratchet_sub, *o);
      record_options(*ratchet_sub, *o);
      auto* accept_sub = sub.add_subcommand("accept", "Set metrics (--metric, --suite) to the record's values (may loosen), with one reason");
      common_options(*accept_sub, *o);
      record_options(*accept_sub, *o);
      accept_sub->add_option("--metric", o->metrics, "<suite>/<metric> (repeat, or separate with commas)")
          ->delimiter(',');
      accept_sub->add_option("--suite", o->suites, "Accept every metric of this suite in the record (repeatable)")
          ->delimiter(',');
      accept_sub->add_option("--reason", o->reason, "Why the change is acceptable (kept in the history)")->required();
      accept_sub->add_flag("--remove", o->remove, "Remove the metric from the baseline instead (no --record needed)");
      auto* freeze_sub = sub.add_subcommand("freeze", "Freeze the file or one metric: it never moves until unfrozen");
      auto* unfreeze_sub = sub.add_subcommand("unfreeze", "Unfreeze the file or one metric");
      for (auto* f : {freeze_sub, unfreeze_sub}) {
        common_options(*f, *o);
        f->add_option("--metric", o->metric, "<suite>/<metric> (default: the whole file)");
        f->add_option("--reason", o->reason, "Why (kept in the history)")->required();
      }
      return [o, show_cmd, init_cmd, ratchet_sub, accept_sub, freeze_sub, unfreeze_sub]() -> int {
        if (show_cmd->parsed()) return show(*o);
        if (init_cmd->parsed()) return init(*o);
        if (ratchet_sub->parsed()) return ratchet_cmd(*o);
        if (accept_sub->parsed()) return accept_cmd(*o);
        if (freeze_sub->parsed()) return freeze_cmd(*o, true);
        if (unfreeze_sub->parsed()) return freeze_cmd(*o, false);
        return to_int(ExitCode::input_error);
      };
    },
});

}  // namespace
