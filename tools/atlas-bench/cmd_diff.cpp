// atlas-bench diff A B: compare two benchmark records metric by metric (records/diff.hpp), each
// metric judged by the gate's own rule (gates/diff_judge.hpp), each side picked among comparable
// records (records/pick.hpp).
#include "common/build_paths.hpp"
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "common/exit_code.hpp"
#include "gates/config.hpp"
#include "gates/diff_judge.hpp"
#include "records/diff.hpp"
#include "records/pick.hpp"
#include "records/printers/diff_printer.hpp"
#include "records/record_io.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

struct DiffArgs {
  std::string a, b;
  std::string format = "text";
  std::string store = ".benchmarks";
  std::string gate;
  std::string rules = "pr";
  std::string config;
  bool allow_dirty = false;
  double alpha = 0, threshold_pct = 0;
  CLI::Option* alpha_given = nullptr;      ///< set when --alpha was passed
  CLI::Option* threshold_given = nullptr;  ///< set when --threshold-pct was passed
};

const RegisterCommand kDiff{{
    "diff",
    "Compare two benchmark records (files, or commits whose comparable records are picked) by the gate's rules; exit 1 when B regressed, 2 when undecided",
    [](CLI::App& sub, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<DiffArgs>();
      sub.add_option("A", args->a, "Baseline: a record file, or a commit prefix / revision (a record of it like B is picked)")
          ->required();
      sub.add_option("B", args->b, "Candidate: a record file, or a commit prefix / revision")->required();
      sub.add_option("--format", args->format, "Output format")
          ->check(CLI::IsMember({"text", "md", "markdown", "json"}))
          ->capture_default_str();
      sub.add_option("--benchmarks-dir,--store", args->store, "Record store to resolve commit prefixes in")->capture_default_str();
      sub.add_option("--gate", args->gate, "Only consider records of this gate or suite when resolving commits");
      sub.add_flag("--allow-dirty", args->allow_dirty,
                   "Let a clean commit name also pick its -dirty records (taken with uncommitted changes); clean ones are still preferred");
      sub.add_option("--rules", args->rules,
                     "Gate whose config (gates/config/<gate>.json) gives the tolerances, alpha and equality metrics")
          ->capture_default_str();
      sub.add_option("--config", args->config, "Gate config file to take the rules from instead of --rules");
      args->alpha_given =
          sub.add_option("--alpha", args->alpha, "Significance level of the Mann-Whitney U test (default: the gate config's)")
              ->check(CLI::Range(0.0, 1.0));
      args->threshold_given = sub.add_option("--threshold-pct", args->threshold_pct,
                                             "Relative tolerance of every timed metric, in percent (default: the gate config's)")
                                  ->check(CLI::NonNegativeNumber);
      return [args]() {
        const auto cwd = std::filesystem::current_path();
        const auto cfg = gates::load_gate_config(gates::gate_config_path(args->rules, args->config, ATLAS_SOURCE_DIR));
        records::PickOptions pick;
        pick.gate_or_suite = args->gate;
        pick.allow_dirty = args->allow_dirty;
        pick.repo_dir = cwd;
        const auto picked = records::pick_pair(args->a, args->b, args->store, pick);
        std::cerr << "A: " << picked.a.path.string() << ": " << picked.a.why << "\n"
                  << "B: " << picked.b.path.string() << ": " << picked.b.why << "\n";
        const auto ra = records::read_record(picked.a.path);
        const auto rb = records::read_record(picked.b.path);

        const bool alpha_given = args->alpha_given->count() > 0, threshold_given = args->threshold_given->count() > 0;
        records::DiffOptions options;
        options.alpha = alpha_given ? args->alpha : cfg.alpha;
        gates::DiffJudgeOverrides overrides;
        if (alpha_given) overrides.alpha = args->alpha;
        if (threshold_given) {
          overrides.timed_relative = args->threshold_pct / 100.0;
          options.threshold_pct = args->threshold_pct;
        } else {
          options.threshold_pct = cfg.timed_tolerance.relative * 100.0;
        }
        options.judge = gates::diff_judge(cfg, overrides);
        options.rule_text = "judged by the " + cfg.gate + " gate's rules (A as the baseline" +
                            std::string(alpha_given || threshold_given ? ", overridden on the command line" : "") + ")";
        auto diff = records::diff_records(ra, rb, options, std::filesystem::weakly_canonical(picked.a.path).string(),
                                          std::filesystem::weakly_canonical(picked.b.path).string());
        // Files are compared as given; say when they are not alike.
        if (const auto unlike = records::comparable(ra, rb); !unlike.empty())
          diff.warnings.insert(diff.warnings.begin(), "A and B are not alike (" + unlike + "): differences may be that, not the code");
        records::make_diff_printer(args->format)->print(diff, std::cout);
        // README's exit-code table, row by row (records::exit_code_of).
        return to_int(records::exit_code(diff));
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
