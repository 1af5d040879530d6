#include "records/pick.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <system_error>

#include "common/error.hpp"
#include "records/error.hpp"
#include "records/record_io.hpp"

namespace atlas::records {
namespace fs = std::filesystem;
namespace {

struct Candidate {
  fs::path path;
  bool dirty = false;
  std::optional<Record> record;  ///< empty when the file could not be read
  std::string error;             ///< why it could not be read
};

std::vector<Candidate> load(const std::vector<StoredRecord>& stored) {
  std::vector<Candidate> out;
  for (const auto& s : stored) {
    Candidate c{s.path, s.dirty, std::nullopt, ""};
    try {
      Record r = read_record(s.path);
      c.error = provenance_problem(r, s);
      if (c.error.empty()) c.record = std::move(r);
    } catch (const atlas::Error& e) {
      c.error = e.what();
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string short_sha(const std::string& sha) { return sha.size() > 12 ? sha.substr(0, 12) : sha; }

std::string model_text(const ModelInfo& m) {
  if (m.path.empty() && m.sha256.empty()) return "no model";
  std::string s = m.path.empty() ? "(no path)" : m.path;
  if (!m.sha256.empty()) s += " (sha256 " + short_sha(m.sha256) + ")";
  return s;
}

// One line saying what a record is: kind, producer, machine class, model.
std::string what(const Record& r) {
  return kind_of(r).describe() + ", " + producer_of(r) + ", " + r.machine.machine_class + ", " + model_text(r.model) +
         (r.git.dirty ? ", dirty (uncommitted changes)" : "");
}

// Preference order (lower is better), most important first: valid, no test hooks, the preferred
// gate, a whole run rather than one nightly shard, clean. Equal ranks keep the store's newest-first
// order, so the same store always yields the same pick.
std::array<int, 5> rank(const Candidate& c, const std::string& prefer_gate) {
  const Record& r = *c.record;
  const RecordKind k = kind_of(r);
  return {k.valid ? 0 : 1, k.hooks.empty() ? 0 : 1, (prefer_gate.empty() || r.gate_or_suite == prefer_gate) ? 0 : 1,
          k.shard.empty() ? 0 : 1, c.dirty ? 1 : 0};
}

// Why `c` ranks below the chosen record ("" when it ranks the same: it is only older).
std::string passed_because(const Candidate& c, const std::string& prefer_gate) {
  const Record& r = *c.record;
  const RecordKind k = kind_of(r);
  if (!k.valid) return "invalid";
  if (!k.hooks.empty()) {
    std::string s = "test hooks";
    for (const auto& h : k.hooks) s += " " + h;
    return s;
  }
  if (!prefer_gate.empty() && r.gate_or_suite != prefer_gate) return "not gate " + prefer_gate;
  if (!k.shard.empty()) return "shard " + k.shard;
  if (c.dirty) return "dirty";
  return "older";
}

// Picks the best-ranked readable candidate that `accept` allows; the sentence says which and why.
std::optional<PickedRecord> best(const std::vector<Candidate>& all, const std::string& commit_arg,
                                 const std::string& prefer_gate,
                                 const std::function<std::string(const Record&)>& mismatch) {
  std::vector<const Candidate*> ok;
  for (const auto& c : all)
    if (c.record && mismatch(*c.record).empty()) ok.push_back(&c);
  if (ok.empty()) return std::nullopt;
  std::stable_sort(ok.begin(), ok.end(), [&](const Candidate* x, const Candidate* y) {
    return rank(*x, prefer_gate) < rank(*y, prefer_gate);
  });
  const Candidate& chosen = *ok.front();
  std::string why = what(*chosen.record) + "; of commit " + commit_arg + "'s " + std::to_string(all.size()) +
                    " record(s), " + std::to_string(ok.size()) + " comparable";
  const auto chosen_rank = rank(chosen, prefer_gate);
  std::vector<std::string> passed;
  for (const auto& c : all) {
    if (&c == &chosen) continue;
    const std::string name = c.path.filename().string();
    if (!c.record) passed.push_back(name + (c.error.rfind("refused: ", 0) == 0 ? " (" + c.error + ")" : " (unreadable)"));
    else if (const auto m = mismatch(*c.record); !m.empty()) passed.push_back(name + " (" + m + ")");
    else if (rank(c, prefer_gate) != chosen_rank) passed.push_back(name + " (" + passed_because(c, prefer_gate) + ")");
    else passed.push_back(name + " (older)");
  }
  why += passed.empty() ? "; the only one" : "; the best ranked (valid, no test hooks, whole run, newest)";
  if (!passed.empty()) {
    why += "; passed over:";
    for (std::size_t i = 0; i < passed.size(); ++i) why += (i ? ", " : " ") + passed[i];
  }
  return PickedRecord{chosen.path, why};
}

std::string listing(const std::vector<Candidate>& all, const std::function<std::string(const Record&)>& mismatch) {
  std::string s;
  for (const auto& c : all) {
    s += "\n  " + c.path.string() + ": ";
    if (!c.record) {
      s += "unreadable: " + c.error;
      continue;
    }
    s += what(*c.record);
    if (const auto m = mismatch(*c.record); !m.empty()) s += "; differs: " + m;
  }
  return s;
}

bool is_file(const std::string& arg) {
  std::error_code ec;
  return fs::is_regular_file(arg, ec);
}

PickedRecord given_file(const std::string& arg) {
  return {arg, "the file given (" + what(read_record(arg)) + ")"};
}

std::vector<Candidate> commit_side(const std::string& arg, const fs::path& store_dir, const PickOptions& o) {
  return load(commit_records(arg, store_dir, o.gate_or_suite, o.repo_dir, o.allow_dirty));
}

// A commit side matched to a record chosen already (a file, or B's pick).
PickedRecord matched(const std::string& arg, const std::vector<Candidate>& all, const Record& other,
                     const std::string& other_name) {
  const auto mismatch = [&](const Record& r) { return comparable(r, other); };
  if (auto p = best(all, arg, "", mismatch)) return *p;
  throw RecordError("no record of \"" + arg + "\" can be compared with " + other_name + " (" + what(other) +
                    "): the commit's records are:" + listing(all, mismatch) +
                    "\nrun the same gate or suite on the same machine class and model at that commit, or pass two "
                    "record files to compare them anyway");
}

}  // namespace

std::string producer_of(const Record& r) {
  if (!r.merged_from.empty()) return "merged";
  const RecordKind k = kind_of(r);
  if (!k.shard.empty()) return "nightly shard " + k.shard;
  if (r.verdicts.is_object() && r.verdicts.contains("overall")) return "gate";
  return "run";
}

std::string comparable(const Record& a, const Record& b) {
  auto differ = [](const std::string& what, const std::string& x, const std::string& y) {
    return what + " " + (x.empty() ? "\"\"" : x) + " vs " + (y.empty() ? "\"\"" : y);
  };
  if (a.machine.machine_class != b.machine.machine_class)
    return differ("machine class", a.machine.machine_class, b.machine.machine_class);
  if (a.gate_or_suite != b.gate_or_suite) return differ("gate or suite", a.gate_or_suite, b.gate_or_suite);
  if (producer_of(a) != producer_of(b)) return differ("made by", producer_of(a), producer_of(b));
  const auto ka = kind_of(a), kb = kind_of(b);
  if (ka.target != kb.target) return differ("target", ka.target, kb.target);
  const bool by_hash = !a.model.sha256.empty() && !b.model.sha256.empty();
  if (by_hash ? a.model.sha256 != b.model.sha256 : (a.model.path != b.model.path || a.model.format != b.model.format))
    return differ("model", model_text(a.model), model_text(b.model));
  bool common = false;
  for (const auto& [name, s] : a.suites) {
    const auto it = b.suites.find(name);
    if (it == b.suites.end()) continue;
    common = true;
    if (s.config != it->second.config) return "suite " + name + " config " + s.config.dump() + " vs " + it->second.config.dump();
  }
  if (!common && !(a.suites.empty() && b.suites.empty())) return "no suite in common";
  return "";
}

PickedRecord pick_record(const std::string& arg, const fs::path& store_dir, const PickOptions& options,
                         const std::string& prefer_gate) {
  if (is_file(arg)) return given_file(arg);
  const auto all = commit_side(arg, store_dir, options);
  if (auto p = best(all, arg, prefer_gate, [](const Record&) { return std::string(); })) return *p;
  throw RecordError("no readable record of \"" + arg + "\" under " + store_dir.string() + ":" +
                    listing(all, [](const Record&) { return std::string(); }));
}

PickedPair pick_pair(const std::string& a_arg, const std::string& b_arg, const fs::path& store_dir,
                     const PickOptions& options) {
  const bool a_file = is_file(a_arg), b_file = is_file(b_arg);
  if (a_file && b_file) return {given_file(a_arg), given_file(b_arg)};
  if (a_file) {
    const Record ra = read_record(a_arg);
    return {given_file(a_arg), matched(b_arg, commit_side(b_arg, store_dir, options), ra, "A")};
  }
  if (b_file) {
    const Record rb = read_record(b_arg);
    return {matched(a_arg, commit_side(a_arg, store_dir, options), rb, "B"), given_file(b_arg)};
  }
  // Two commits: B's records in preference order, each tried against A's.
  const auto as = commit_side(a_arg, store_dir, options);
  const auto bs = commit_side(b_arg, store_dir, options);
  std::vector<const Candidate*> order;
  for (const auto& c : bs)
    if (c.record) order.push_back(&c);
  std::stable_sort(order.begin(), order.end(),
                   [](const Candidate* x, const Candidate* y) { return rank(*x, "") < rank(*y, ""); });
  for (const Candidate* b : order) {
    const auto mismatch_a = [&](const Record& r) { return comparable(r, *b->record); };
    auto pa = best(as, a_arg, "", mismatch_a);
    if (!pa) continue;
    // B's own sentence: among B's records comparable with the A just chosen, this one ranks first.
    const Record ra = read_record(pa->path);
    auto pb = best(bs, b_arg, "", [&](const Record& r) { return comparable(r, ra); });
    if (pb) return {*pa, *pb};
  }
  const Record* head = order.empty() ? nullptr : &*order.front()->record;
  const auto vs_head = [&](const Record& r) { return head ? comparable(r, *head) : std::string(); };
  throw RecordError("no record of \"" + a_arg + "\" can be compared with any record of \"" + b_arg +
                    "\" (same machine class, gate or suite, producer, target, model and suite configs).\n" + b_arg +
                    "'s records:" + listing(bs, [](const Record&) { return std::string(); }) + "\n" + a_arg +
                    "'s records (differences from " + b_arg + "'s first):" + listing(as, vs_head) +
                    "\npass two record files to compare them anyway");
}

}  // namespace atlas::records
