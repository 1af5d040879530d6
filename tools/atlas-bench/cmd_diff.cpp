// atlas-bench diff A B: compare two benchmark records metric by metric (records/diff.hpp).
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
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
    "Compare two benchmark records (files or commit-ish prefixes resolved in the .benchmarks store); exit 1 when B regressed",
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
        // A file side is what the user chose; a commit side is picked to match the other side
        // (same gate, target, no test hooks, a whole run rather than a shard). With two commits,
        // B (the candidate) is picked first and A matched to it.
        const bool a_file = std::filesystem::is_regular_file(args->a), b_file = std::filesystem::is_regular_file(args->b);
        std::optional<records::Record> ra, rb;
        records::PickedRecord pa, pb;
        if (a_file && !b_file) {
          pa = records::pick_record(args->a, args->store, nullptr, args->gate, cwd);
          ra = records::read_record(pa.path);
          pb = records::pick_record(args->b, args->store, &*ra, args->gate, cwd);
          rb = records::read_record(pb.path);
        } else {
          pb = records::pick_record(args->b, args->store, nullptr, args->gate, cwd);
          rb = records::read_record(pb.path);
          pa = records::pick_record(args->a, args->store, &*rb, args->gate, cwd);
          ra = records::read_record(pa.path);
        }
        std::cerr << "A: " << pa.path.string() << ": " << pa.why << "\n"
                  << "B: " << pb.path.string() << ": " << pb.why << "\n";
        const auto& pa_path = pa.path;
        const auto& pb_path = pb.path;
        const auto diff = records::diff_records(*ra, *rb, args->options, std::filesystem::weakly_canonical(pa_path).string(),
                                                std::filesystem::weakly_canonical(pb_path).string());
        records::make_diff_printer(args->format)->print(diff, std::cout);
        // README's exit-code table: a printed regression (or a changed output fingerprint) is 1.
        const int worse = diff.count(records::Change::regressed) + diff.count(records::Change::changed);
        return to_int(worse > 0 ? ExitCode::regression : ExitCode::pass);
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
