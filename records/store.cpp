#include "records/store.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cctype>
#include <regex>
#include <set>
#include <system_error>

#include "common/atomic_file.hpp"
#include "records/error.hpp"
#include "records/provenance.hpp"
#include "records/record_io.hpp"
#include "records/test_hooks.hpp"

namespace atlas::records {
namespace fs = std::filesystem;
namespace {

bool safe_component(const std::string& s) {
  if (s.empty() || s.front() == '.') return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '+' || c == '-';
  });
}

void require_safe(const std::string& value, const char* field) {
  if (!safe_component(value)) {
    throw RecordError(std::string("record field ") + field + " = \"" + value +
                      "\" cannot name a .benchmarks path component (allowed: letters, digits, '.', '_', "
                      "'+', '-'; not empty, not starting with '.')");
  }
}

// "<gate_or_suite>-<YYYYMMDDTHHMMSSZ>[-N].json"; gate names may themselves contain '-'.
const std::regex& file_name_pattern() {
  static const std::regex re(R"(^(.+)-(\d{8}T\d{6}Z)(-\d+)?\.json$)");
  return re;
}

std::optional<StoredRecord> parse_layout(const fs::path& file, const std::string& machine, const std::string& commit_dir) {
  std::smatch m;
  const std::string name = file.filename().string();
  if (name.empty() || name.front() == '.' || !std::regex_match(name, m, file_name_pattern())) return std::nullopt;
  StoredRecord s;
  s.path = file;
  s.machine_class = machine;
  s.commit = commit_dir;
  constexpr std::string_view kDirty = "-dirty";
  if (s.commit.size() > kDirty.size() && s.commit.ends_with(kDirty)) {
    s.dirty = true;
    s.commit.resize(s.commit.size() - kDirty.size());
  }
  s.gate_or_suite = m[1].str();
  s.utc = m[2].str();
  if (m[3].matched) {
    try {
      s.sequence = std::stoi(m[3].str().substr(1));
    } catch (const std::exception&) {
      return std::nullopt;  // a suffix too long for an int is not one of ours
    }
  }
  return s;
}

bool older(const StoredRecord& a, const StoredRecord& b) {
  if (a.utc != b.utc) return a.utc < b.utc;
  if (a.sequence != b.sequence) return a.sequence < b.sequence;
  return a.path < b.path;
}

}  // namespace

std::string compact_utc(const std::string& iso) {
  static const std::regex re(R"(^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$)");
  std::smatch m;
  if (!std::regex_match(iso, m, re)) {
    throw RecordError("start_utc = \"" + iso + "\" is not an ISO-8601 UTC time like 2026-11-29T14:33:20Z");
  }
  return m[1].str() + m[2].str() + m[3].str() + "T" + m[4].str() + m[5].str() + m[6].str() + "Z";
}

fs::path record_relative_path(const Record& r) {
  require_safe(r.machine.machine_class, "machine.machine_class");
  require_safe(r.git.commit, "git.commit");
  require_safe(r.gate_or_suite, "gate_or_suite");
  const std::string commit_dir = r.git.commit + (r.git.dirty ? "-dirty" : "");
  return fs::path(r.machine.machine_class) / commit_dir / (r.gate_or_suite + "-" + compact_utc(r.start_utc) + ".json");
}

fs::path write_to_store(const Record& r, const fs::path& store_dir) {
  const fs::path rel = record_relative_path(r);
  const std::string text = record_text(r);
  const fs::path dir = store_dir / rel.parent_path();
  const std::string stem = rel.stem().string();
  for (int attempt = 1; attempt <= 1000; ++attempt) {
    const fs::path target = dir / (attempt == 1 ? stem + ".json" : stem + "-" + std::to_string(attempt) + ".json");
    std::error_code ec;
    if (fs::exists(target, ec)) continue;
    try {
      write_file_atomic_new(target, text);
      return target;
    } catch (const atlas::Error&) {
      // Another writer took this name between the check and link(2): try the next suffix.
      if (fs::exists(target, ec)) continue;
      throw;
    }
  }
  throw RecordError(dir.string() + ": more than 1000 records named " + stem + "*.json; refusing to write");
}

std::vector<StoredRecord> list_records(const fs::path& store_dir) {
  std::vector<StoredRecord> out;
  std::error_code ec;
  if (!fs::is_directory(store_dir, ec)) return out;
  for (const auto& machine : fs::directory_iterator(store_dir, ec)) {
    if (!machine.is_directory(ec)) continue;
    for (const auto& commit : fs::directory_iterator(machine.path(), ec)) {
      if (!commit.is_directory(ec)) continue;
      for (const auto& file : fs::directory_iterator(commit.path(), ec)) {
        if (!file.is_regular_file(ec)) continue;
        if (auto s = parse_layout(file.path(), machine.path().filename().string(), commit.path().filename().string())) {
          out.push_back(std::move(*s));
        }
      }
    }
  }
  if (!out.empty()) {
    const auto committed = tracked_though_ignored(store_dir);
    for (auto& s : out) {
      const std::string rel = s.machine_class + "/" + s.commit + (s.dirty ? "-dirty" : "") + "/" + s.path.filename().string();
      s.committed_though_ignored = committed.count(rel) > 0;
    }
  }
  std::sort(out.begin(), out.end(), older);
  return out;
}

namespace {

// Every record of the one commit `arg` names (see commit_records), newest first.
std::vector<StoredRecord> commit_candidates(const std::string& arg, const fs::path& store_dir,
                                            const std::string& gate_or_suite, const std::optional<fs::path>& repo_dir,
                                            bool allow_dirty) {
  if (arg.empty()) throw RecordError("empty record argument: give a record file or a commit prefix");
  const auto all = list_records(store_dir);
  auto matching = [&](const std::string& prefix) {
    std::vector<StoredRecord> hits;
    bool exact = false;
    for (const auto& s : all) {
      if (!gate_or_suite.empty() && s.gate_or_suite != gate_or_suite) continue;
      const std::string dir = s.commit + (s.dirty ? "-dirty" : "");
      if (dir == prefix) exact = true;
      if (dir.starts_with(prefix)) hits.push_back(s);
    }
    // "abc-dirty" or a full sha names one directory exactly; do not mix in its neighbours.
    if (exact) {
      std::erase_if(hits, [&](const StoredRecord& s) { return s.commit + (s.dirty ? "-dirty" : "") != prefix; });
    }
    return hits;
  };

  auto hits = matching(arg);
  std::optional<std::string> resolved;
  if (hits.empty() && repo_dir) {
    resolved = git_rev_parse(*repo_dir, arg);
    if (resolved) hits = matching(*resolved);
  }
  const std::string scope = gate_or_suite.empty() ? "" : " (gate or suite \"" + gate_or_suite + "\")";
  if (hits.empty()) {
    const std::string name = resolved ? *resolved : arg;
    throw RecordError("no record matches \"" + arg + "\"" + (resolved ? " (commit " + *resolved + ")" : "") +
                      ": not a file, and no " + (store_dir / "*" / (name + "*")).string() + "/ directory holds a record" +
                      scope + "; run a suite or gate at that commit first");
  }
  // A clean name never silently means a dirty run: that record measured other code.
  if (!arg.ends_with("-dirty") && !allow_dirty) {
    std::vector<StoredRecord> dirty;
    for (const auto& h : hits)
      if (h.dirty) dirty.push_back(h);
    std::erase_if(hits, [](const StoredRecord& s) { return s.dirty; });
    if (hits.empty()) {
      std::string list;
      for (const auto& d : dirty) list += "\n  " + d.path.string();
      throw RecordError("\"" + arg + "\" has only records taken with uncommitted changes (-dirty), which ran other code " +
                        "than the commit; name one as " + dirty.front().commit + "-dirty (or pass its file) to use it:" + list);
    }
  }
  std::set<std::string> commits;
  for (const auto& h : hits) commits.insert(h.commit);
  if (commits.size() > 1) {
    std::string list;
    for (const auto& c : commits) list += "\n  " + c;
    throw RecordError("commit prefix \"" + arg + "\" is ambiguous under " + store_dir.string() + "; candidates:" + list);
  }
  std::sort(hits.begin(), hits.end(), [](const StoredRecord& a, const StoredRecord& b) { return older(b, a); });
  return hits;
}

}  // namespace

namespace {

// ISO-8601 UTC a day from now: records from a machine whose clock runs a little ahead still
// stand; a claimed start far in the future does not.
std::string day_from_now_iso() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + std::chrono::hours(24));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

std::string provenance_problem(const Record& r, const StoredRecord& s) {
  if (r.git.commit != s.commit || r.git.dirty != s.dirty)
    return "refused: its git.commit " + r.git.commit + (r.git.dirty ? "-dirty" : "") + " disagrees with its folder " +
           s.commit + (s.dirty ? "-dirty" : "");
  // The rest of the path must agree too: the machine folder decides which records are compared,
  // the file name's stamp which is the newest.
  if (r.machine.machine_class != s.machine_class)
    return "refused: its machine.machine_class " + r.machine.machine_class + " disagrees with its folder " + s.machine_class;
  if (r.gate_or_suite != s.gate_or_suite)
    return "refused: its gate_or_suite " + r.gate_or_suite + " disagrees with its file name's " + s.gate_or_suite;
  std::string stamp;
  try {
    stamp = compact_utc(r.start_utc);
  } catch (const RecordError&) {
    stamp = r.start_utc;  // not a UTC time at all: it cannot equal a file name's stamp
  }
  if (stamp != s.utc)
    return "refused: its start_utc " + r.start_utc + " disagrees with its file name's stamp " + s.utc;
  if (r.start_utc > day_from_now_iso()) return "refused: its start_utc " + r.start_utc + " is in the future";
  // A run writes records into the store; git checks out what a commit brought. Where the
  // checkout ignores the store, a tracked record was added by force, by whoever wrote the commit.
  if (s.committed_though_ignored)
    return "refused: committed into the checkout although its ignore rules exclude the store (git add -f): a file a "
           "commit brought, not a run's record";
  return "";
}

fs::path resolve_record(const std::string& arg, const fs::path& store_dir, const std::string& gate_or_suite,
                        const std::optional<fs::path>& repo_dir) {
  std::error_code ec;
  if (fs::is_regular_file(arg, ec)) return arg;
  const auto hits = commit_candidates(arg, store_dir, gate_or_suite, repo_dir, false);
  // Newest first; a valid record wins over newer invalid ones (a run that stopped on an error
  // must not stand in for the commit's real result), and the newest is the fallback.
  std::vector<StoredRecord> standing;
  for (const auto& h : hits) {
    try {
      const Record r = read_record(h.path);
      if (!provenance_problem(r, h).empty()) continue;
      standing.push_back(h);
      if (r.valid) return h.path;
    } catch (const atlas::Error&) {
      // unreadable: not a candidate here; the fallback below still names the newest
    }
  }
  if (standing.empty()) throw RecordError("no record of \"" + arg + "\" under " + store_dir.string() +
                                          " can stand for its commit (unreadable, or refused: see `records list`)");
  return standing.front().path;
}

std::vector<StoredRecord> commit_records(const std::string& arg, const fs::path& store_dir, const std::string& gate_or_suite,
                                         const std::optional<fs::path>& repo_dir, bool allow_dirty) {
  return commit_candidates(arg, store_dir, gate_or_suite, repo_dir, allow_dirty);
}

RecordKind kind_of(const Record& r) {
  RecordKind k;
  k.gate_or_suite = r.gate_or_suite;
  k.target = r.config.is_object() ? r.config.value("target_name", std::string()) : std::string();
  k.hooks = active_test_hooks(r);
  if (r.verdicts.is_object() && r.verdicts.contains("shard") && r.verdicts["shard"].is_object()) {
    const auto& sh = r.verdicts["shard"];
    const int count = sh.value("count", 1);
    if (count > 1) k.shard = std::to_string(sh.value("index", 0)) + "/" + std::to_string(count);
  }
  k.merged = !r.merged_from.empty();
  k.valid = r.valid;
  return k;
}

std::string RecordKind::describe() const {
  std::string s = gate_or_suite + ", " + (target.empty() ? "target unknown" : target);
  if (!shard.empty()) s += ", shard " + shard;
  if (merged) s += ", merged";
  if (hooks.empty()) s += ", no test hooks";
  else {
    s += ", test hooks";
    for (const auto& h : hooks) s += " " + h;
  }
  if (!valid) s += ", INVALID";
  return s;
}

}  // namespace atlas::records
