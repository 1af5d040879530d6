// atlas-bench records {list, merge}: the .benchmarks store (records/store.hpp, records/merge.hpp).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/exit_code.hpp"
#include "records/merge.hpp"
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
  std::vector<records::StoredRecord> rows;
  for (auto& s : records::list_records(a.store)) {
    if (!a.machine_class.empty() && s.machine_class != a.machine_class) continue;
    if (!a.commit.empty() && s.commit.rfind(a.commit, 0) != 0) continue;
    if (!a.gate.empty() && s.gate_or_suite != a.gate) continue;
    rows.push_back(std::move(s));
  }
  // What kind of run each record is (read from the file): which of a commit's records are
  // comparable is not visible from the path alone.
  // A record that does not read (a wrong-typed field, a 1e999 sample, a file nested too deep)
  // is listed as unreadable with its reason, and the rest of the store is still listed.
  // A record that reads but cannot stand for its path (records::provenance_problem: misfiled,
  // stamped in the future, committed into an ignored store) is listed as refused with the reason
  // every pick and the trends give for passing it over.
  std::vector<std::optional<records::RecordKind>> kinds;
  std::vector<std::string> errors, refused;
  for (const auto& s : rows) {
    try {
      const records::Record r = records::read_record(s.path);
      kinds.push_back(records::kind_of(r));
      errors.emplace_back();
      refused.push_back(records::provenance_problem(r, s));
    } catch (const atlas::Error& e) {
      kinds.push_back(std::nullopt);
      errors.emplace_back(e.what());
      refused.emplace_back();
    }
  }
  auto kind_text = [&](std::size_t i) -> std::string {
    const auto& k = kinds[i];
    if (!k) return "unreadable";
    std::string t = k->gate_or_suite;
    if (!k->shard.empty()) t += " shard " + k->shard;
    if (k->merged) t += " merged";
    if (!k->valid) t += " INVALID";
    if (!refused[i].empty()) t += " REFUSED";
    return t;
  };
  auto hooks_text = [](const std::optional<records::RecordKind>& k) -> std::string {
    if (!k || k->hooks.empty()) return "-";
    std::string t;
    for (const auto& h : k->hooks) t += (t.empty() ? "" : ",") + h;
    return t;
  };
  if (a.format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& s = rows[i];
      const auto& k = kinds[i];
      j.push_back({{"path", s.path.string()},
                   {"machine_class", s.machine_class},
                   {"commit", s.commit},
                   {"dirty", s.dirty},
                   {"gate_or_suite", s.gate_or_suite},
                   {"utc", s.utc},
                   {"kind", kind_text(i)},
                   {"target", k ? nlohmann::json(k->target) : nlohmann::json(nullptr)},
                   {"test_hooks", k ? nlohmann::json(k->hooks) : nlohmann::json(nullptr)},
                   {"valid", k ? nlohmann::json(k->valid) : nlohmann::json(nullptr)}});
      if (!k) j.back()["error"] = errors[i];
      if (!refused[i].empty()) j.back()["refused"] = refused[i];
    }
    std::cout << j.dump(2) << "\n";
    return to_int(ExitCode::pass);
  }
  if (!rows.empty()) {
    std::printf("%-16s  %-20s  %-18s  %-22s  %-12s  %-24s  %s\n", "utc", "machine_class", "commit", "kind", "target",
                "test_hooks", "path");
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& s = rows[i];
    const std::string commit = s.commit.substr(0, 12) + (s.dirty ? "-dirty" : "");
    const std::string target = kinds[i] ? kinds[i]->target : "";
    std::printf("%-16s  %-20s  %-18s  %-22s  %-12s  %-24s  %s\n", s.utc.c_str(), s.machine_class.c_str(),
                commit.c_str(), kind_text(i).c_str(), target.c_str(), hooks_text(kinds[i]).c_str(),
                s.path.string().c_str());
  }
  if (rows.empty()) std::cerr << "no records under " << a.store << "\n";
  for (const auto& e : errors)
    if (!e.empty()) std::cerr << "atlas-bench: unreadable record: " << e << "\n";
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (!refused[i].empty()) std::cerr << "atlas-bench: " << rows[i].path.string() << ": " << refused[i] << "\n";
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
