// atlas-bench report: the record store as trends (trends/report.hpp): each metric's steps, its
// drift since the BASELINE last moved, and a static HTML site (trends/site.hpp) with --out.
// Exit 1 when a metric drifted past its tolerance, 0 otherwise; 3 for bad input.
#include "common/build_paths.hpp"

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "common/exit_code.hpp"
#include "gates/config.hpp"
#include "tools/atlas-bench/command.hpp"
#include "trends/commit_times.hpp"
#include "trends/report.hpp"
#include "trends/site.hpp"

namespace atlas::cli {
namespace {

struct ReportArgs {
  std::string store = ".benchmarks";
  std::string baselines = "baselines";
  std::string out;
  std::string rules = "pr";
  std::string repo = ".";
  bool no_git = false;
  trends::TrendSettings settings;
};

const RegisterCommand kReport{{
    "report",
    "Trends over the record store: steps in each metric's history (E-divisive means), drift since the BASELINE last moved, and a static HTML site (--out); exit 1 on a drift past a tolerance",
    [](CLI::App& sub, const GlobalOptions&) -> std::function<int()> {
      auto a = std::make_shared<ReportArgs>();
      auto& cp = a->settings.change_points;
      sub.add_option("--benchmarks-dir,--store", a->store, "Record store")->capture_default_str();
      sub.add_option("--baselines,--baselines-dir", a->baselines, "Folder of <machine-class>/<gate>.BASELINE.json")->capture_default_str();
      sub.add_option("--out", a->out, "Write the HTML site into this folder (index.html first)");
      sub.add_option("--rules", a->rules, "Gate whose config judges records of a gate or suite without a config of its own")
          ->capture_default_str();
      sub.add_option("--repo", a->repo, "Checkout whose committer dates order the commits (else the records' times)")
          ->capture_default_str();
      sub.add_flag("--no-git", a->no_git, "Order commits by their records' times, without asking git");
      sub.add_option("--max-p", cp.max_p, "Significance level of the change-point permutation test")
          ->check(CLI::Range(1e-6, 0.5))
          ->capture_default_str();
      sub.add_option("--permutations", cp.permutations, "Shuffles per proposed change point")
          ->check(CLI::Range(19, 100000))
          ->capture_default_str();
      sub.add_option("--seed", cp.seed, "Seed of the shuffles (a report is reproducible)")->capture_default_str();
      sub.add_option("--min-segment", cp.min_segment, "Commits on each side of a change point")
          ->check(CLI::Range(2, 1000))
          ->capture_default_str();
      sub.add_option("--level-window", a->settings.level_window, "Commits pooled into the level now and the start")
          ->check(CLI::Range(1, 1000))
          ->capture_default_str();
      return [a]() {
        trends::HistoryOptions o;
        o.store_dir = a->store;
        o.baselines_dir = a->baselines;
        const std::string fallback_rules = a->rules;
        auto configs = std::make_shared<std::map<std::string, gates::GateConfig>>();
        // A gate's own config when it has one (pr, nightly), else the --rules gate's (suite runs).
        o.config_for = [configs, fallback_rules](const std::string& gate) {
          if (const auto it = configs->find(gate); it != configs->end()) return it->second;
          std::filesystem::path p = gates::gate_config_path(gate, "", ATLAS_SOURCE_DIR);
          std::error_code ec;
          if (!std::filesystem::is_regular_file(p, ec)) p = gates::gate_config_path(fallback_rules, "", ATLAS_SOURCE_DIR);
          return (*configs)[gate] = gates::load_gate_config(p);
        };
        if (!a->no_git) o.commit_time = trends::git_commit_times(a->repo);
        const trends::Report report = trends::make_report(o, a->settings);
        trends::print_summary(report, std::cout);
        if (!a->out.empty()) {
          const auto pages = trends::write_site(report, a->out);
          std::cout << "wrote " << pages.size() << " pages: " << pages.front().string() << "\n";
        }
        return to_int(trends::exit_code(report));
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
