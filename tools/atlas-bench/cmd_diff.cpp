// atlas-bench diff A B: compare two benchmark records metric by metric (records/diff.hpp).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "common/exit_code.hpp"
#include "records/diff.hpp"
#include "records/printers/diff_printer.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

struct DiffArgs {
  std::string a, b;
  std::string format = "text";
  std::string store = ".benchmarks";
  std::string gate;
  records::DiffOptions options;
};

const RegisterCommand kDiff{{
    "diff",
    "Compare two benchmark records (files or commit-ish prefixes resolved in the .benchmarks store)",
    [](CLI::App& sub, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<DiffArgs>();
      sub.add_option("A", args->a, "Baseline: a record file, or a commit prefix / revision (newest record of that commit)")
          ->required();
      sub.add_option("B", args->b, "Candidate: a record file, or a commit prefix / revision")->required();
      sub.add_option("--format", args->format, "Output format")
          ->check(CLI::IsMember({"text", "md", "markdown", "json"}))
          ->capture_default_str();
      sub.add_option("--benchmarks-dir,--store", args->store, "Record store to resolve commit prefixes in")->capture_default_str();
      sub.add_option("--gate", args->gate, "Only consider records of this gate or suite when resolving prefixes");
      sub.add_option("--alpha", args->options.alpha, "Significance level of the two-sided Mann-Whitney U test")
          ->check(CLI::Range(0.0, 1.0))
          ->capture_default_str();
      sub.add_option("--threshold-pct", args->options.threshold_pct,
                     "Minimum |change| of the medians, in percent, for a timed metric to count as changed")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
      return [args]() {
        const auto cwd = std::filesystem::current_path();
        const auto pa = records::resolve_record(args->a, args->store, args->gate, cwd);
        const auto pb = records::resolve_record(args->b, args->store, args->gate, cwd);
        const records::Record ra = records::read_record(pa), rb = records::read_record(pb);
        const auto diff = records::diff_records(ra, rb, args->options, std::filesystem::weakly_canonical(pa).string(),
                                                std::filesystem::weakly_canonical(pb).string());
        records::make_diff_printer(args->format)->print(diff, std::cout);
        return to_int(ExitCode::pass);
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
