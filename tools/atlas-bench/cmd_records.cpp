// atlas-bench records {list, merge}: the .benchmarks store (records/store.hpp, records/merge.hpp).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/exit_code.hpp"
#include "records/listing.hpp"
#include "records/merge.hpp"
#include "records/printers/listing_printer.hpp"
#include "records/record_io.hpp"
#include "records/store.hpp"
#include "tools/atlas-bench/command.hpp"

namespace atlas::cli {
namespace {

struct RecordsArgs {
  std::string store = ".benchmarks";
  // list
  std::string machine_class, commit, gate, format = "text";
  // merge
  std::string out;
  std::vector<std::string> inputs;
};

int list(const RecordsArgs& a) {
  const auto rows = records::list_store(a.store, {a.machine_class, a.commit, a.gate});
  records::make_listing_printer(a.format)->print(rows, std::cout);
  if (a.format == "json") return to_int(ExitCode::pass);
  if (rows.empty()) std::cerr << "no records under " << a.store << "\n";
  for (const auto& r : rows)
    if (!r.error.empty()) std::cerr << "atlas-bench: unreadable record: " << r.error << "\n";
  for (const auto& r : rows)
    if (!r.refused.empty()) std::cerr << "atlas-bench: " << r.stored.path.string() << ": " << r.refused << "\n";
  return to_int(ExitCode::pass);
}

int merge(const RecordsArgs& a) {
  std::vector<records::Record> shards;
  const auto cwd = std::filesystem::current_path();
  for (const auto& in : a.inputs) shards.push_back(records::read_record(records::resolve_record(in, a.store, "", cwd)));
  const records::Record merged = records::merge_records(shards);
  std::filesystem::path written;
  if (!a.out.empty()) {
    written = a.out;
    write_file_atomic_new(written, records::record_text(merged));  // never overwrite a record
  } else {
    written = records::write_to_store(merged, a.store);
  }
  std::cout << written.string() << "\n";
  return to_int(ExitCode::pass);
}

const RegisterCommand kRecords{{
    "records",
    "List or merge benchmark records in the .benchmarks store",
    [](CLI::App& sub, const GlobalOptions&) -> std::function<int()> {
      auto args = std::make_shared<RecordsArgs>();
      sub.require_subcommand(1);
      sub.add_option("--benchmarks-dir,--store", args->store, "Record store")->capture_default_str();

      CLI::App* ls = sub.add_subcommand("list", "List records, oldest first: UTC, machine class, commit, kind (gate, shard, merged), target, test hooks, path");
      ls->add_option("--benchmarks-dir,--store", args->store, "Record store")->capture_default_str();
      ls->add_option("--machine-class", args->machine_class, "Only this machine class");
      ls->add_option("--commit", args->commit, "Only commits starting with this prefix");
      ls->add_option("--gate", args->gate, "Only this gate or suite");
      ls->add_option("--format", args->format, "Output format")->check(CLI::IsMember({"text", "json"}))->capture_default_str();

      CLI::App* mg = sub.add_subcommand(
          "merge", "Merge the records of the shards of one run (same commit); writes --out, else into the store");
      mg->add_option("--benchmarks-dir,--store", args->store, "Record store (inputs may be commit prefixes; output goes here)")
          ->capture_default_str();
      mg->add_option("--out", args->out, "Write the merged record to this file (must not exist)");
      mg->add_option("IN", args->inputs, "Shard records (files or commit prefixes)")->required()->expected(1, -1);

      return [args, ls, mg]() {
        if (ls->parsed()) return list(*args);
        if (mg->parsed()) return merge(*args);
        return to_int(ExitCode::input_error);
      };
    },
}};

}  // namespace
}  // namespace atlas::cli
