#include "gates/merge_base_check.hpp"

#include <algorithm>
#include <set>

#include "gates/error.hpp"
#include "gates/history_check.hpp"
#include "gates/process.hpp"

namespace atlas::gates {
namespace {

bool worse(records::Better better, double base, double now) {
  return better == records::Better::lower ? now > base : now < base;
}

// History entries of `now` that are not in `before` (entries are compared as JSON values).
std::vector<HistoryEntry> added_entries(const std::vector<HistoryEntry>& before, const std::vector<HistoryEntry>& now) {
  std::multiset<std::string> seen;
  for (const auto& h : before) seen.insert(to_json(h).dump());
  std::vector<HistoryEntry> out;
  for (const auto& h : now) {
    const auto it = seen.find(to_json(h).dump());
    if (it != seen.end()) {
      seen.erase(it);
    } else {
      out.push_back(h);
    }
  }
  return out;
}

bool history_kept(const std::vector<HistoryEntry>& before, const std::vector<HistoryEntry>& now) {
  std::multiset<std::string> present;
  for (const auto& h : now) present.insert(to_json(h).dump());
  for (const auto& h : before) {
    const auto it = present.find(to_json(h).dump());
    if (it == present.end()) return false;
    present.erase(it);
  }
  return true;
}

bool has_action(const std::vector<HistoryEntry>& entries, HistoryAction a) {
  return std::any_of(entries.begin(), entries.end(), [a](const HistoryEntry& h) { return h.action == a; });
}

std::string num(double v) { return nlohmann::json(v).dump(); }

void check_metric(const std::string& file, const std::string& key, const BaselineMetric& base, const BaselineMetric& now,
                  bool file_frozen_at_base, bool file_unfrozen_since, std::vector<BaselineViolation>& out) {
  if (!history_kept(base.history, now.history)) {
    out.push_back({file, key, "history entries present at the merge-base were removed or edited (history is append-only)"});
  }
  const auto added = added_entries(base.history, now.history);
  const bool accepted_current = std::any_of(added.begin(), added.end(), [&](const HistoryEntry& h) {
    return h.action == HistoryAction::accept && h.new_value && *h.new_value == now.value;
  });
  const bool accepted = has_action(added, HistoryAction::accept);

  const bool changed = base.value != now.value || base.samples != now.samples || base.unit != now.unit ||
                       base.kind != now.kind || base.better != now.better ||
                       base.tolerance.relative != now.tolerance.relative ||
                       base.tolerance.absolute != now.tolerance.absolute;
  if ((base.frozen || file_frozen_at_base) && changed && !has_action(added, HistoryAction::unfreeze) &&
      !file_unfrozen_since) {
    out.push_back({file, key, "changed while frozen at the merge-base, without an unfreeze entry"});
  }
  if (base.frozen && !now.frozen && !has_action(added, HistoryAction::unfreeze)) {
    out.push_back({file, key, "unfrozen without an unfreeze history entry"});
  }
  if (base.unit != now.unit || base.kind != now.kind || base.better != now.better) {
    if (!accepted) out.push_back({file, key, "unit/kind/direction changed without an accept history entry"});
    return;  // values in different units do not compare
  }
  if (worse(base.better, base.value, now.value) && !accepted_current) {
    out.push_back({file, key,
                   "value loosened from " + num(base.value) + " to " + num(now.value) +
                       " without an accept history entry for the new value (`atlas-bench baseline accept`)"});
  }
  if ((now.tolerance.relative > base.tolerance.relative || now.tolerance.absolute > base.tolerance.absolute) &&
      !accepted) {
    out.push_back({file, key,
                   "tolerance loosened (relative " + num(base.tolerance.relative) + " -> " +
                       num(now.tolerance.relative) + ", absolute " + num(base.tolerance.absolute) + " -> " +
                       num(now.tolerance.absolute) + ") without an accept history entry"});
  }
}

ProcessResult git(const std::filesystem::path& cwd, std::vector<std::string> args) {
  args.insert(args.begin(), "git");
  return run_process(args, cwd);
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::vector<BaselineViolation> compare_baseline_versions(const Baseline& base, const Baseline& current,
                                                         const std::string& file) {
  std::vector<BaselineViolation> out;
  if (!history_kept(base.history, current.history)) {
    out.push_back({file, "", "file-level history entries present at the merge-base were removed or edited"});
  }
  const auto added = added_entries(base.history, current.history);
  const bool file_unfrozen_since = has_action(added, HistoryAction::unfreeze);
  if (base.frozen && !current.frozen && !file_unfrozen_since) {
    out.push_back({file, "", "file unfrozen without an unfreeze history entry"});
  }
  for (const auto& [key, bm] : base.metrics) {
    const auto it = current.metrics.find(key);
    if (it == current.metrics.end()) {
      const bool removed = std::any_of(added.begin(), added.end(), [&key](const HistoryEntry& h) {
        return h.action == HistoryAction::remove && h.metric == key;
      });
      if (!removed) {
        out.push_back({file, key, "metric removed without a remove history entry (`atlas-bench baseline accept --remove`)"});
      } else if (base.frozen && !file_unfrozen_since) {
        out.push_back({file, key, "metric removed from a file frozen at the merge-base, without an unfreeze entry"});
      }
      continue;
    }
    check_metric(file, key, bm, it->second, base.frozen, file_unfrozen_since, out);
  }
  return out;
}

MergeBaseReport check_merge_base(const std::filesystem::path& baselines_dir, const std::string& target) {
  namespace fs = std::filesystem;
  MergeBaseReport report;
  std::error_code ec;
  const fs::path dir = fs::absolute(baselines_dir, ec);
  if (!fs::is_directory(dir)) {
    report.skipped_reason = "no baselines directory " + baselines_dir.string();
    return report;
  }
  const auto top = git(dir, {"rev-parse", "--show-toplevel"});
  if (top.exit_status != 0) {
    report.skipped_reason = "the baselines directory " + dir.string() +
                            " is not inside a git checkout, so its history cannot be checked (" + trim(top.err) + ")";
    return report;
  }
  const fs::path root = fs::canonical(trim(top.out));
  std::vector<std::string> candidates;
  if (target.empty() || target == "origin/main") {
    candidates = {"origin/main", "main"};
  } else {
    candidates = {target};
  }
  for (const auto& c : candidates) {
    if (git(root, {"rev-parse", "--verify", "--quiet", c + "^{commit}"}).exit_status == 0) {
      report.target = c;
      break;
    }
  }
  if (report.target.empty()) {
    report.skipped_reason = "target branch not found (tried " + candidates.front() +
                            (candidates.size() > 1 ? " and " + candidates.back() : "") + ")";
    return report;
  }
  const auto mb = git(root, {"merge-base", "HEAD", report.target});
  if (mb.exit_status != 0) {
    report.skipped_reason = "git merge-base HEAD " + report.target + " failed: " + trim(mb.err);
    return report;
  }
  report.base_commit = trim(mb.out);
  report.ran = true;

  const fs::path rel_dir = fs::canonical(dir).lexically_relative(root);
  std::set<std::string> current_files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name.size() < 14 || name.substr(name.size() - 14) != ".BASELINE.json") continue;
    current_files.insert(fs::canonical(entry.path()).lexically_relative(root).generic_string());
  }
  for (const auto& rel : current_files) {
    report.files_checked.push_back(rel);
    const Baseline now = load_baseline(root / rel);
    const auto shown = git(root, {"show", report.base_commit + ":" + rel});
    if (shown.exit_status != 0) {
      // No older version to compare with: the file's own history is the only witness, so a value
      // edited by hand after `baseline init` (a loosened gate nobody reviewed) is caught here.
      report.notes.push_back(rel + ": new since the merge-base (each value checked against its own history)");
      for (const auto& [key, m] : now.metrics) {
        if (const auto problem = history_mismatch(m); !problem.empty())
          report.violations.push_back({rel, key, "new since the merge-base, and its " + problem});
      }
      continue;
    }
    const std::string source = rel + "@" + report.base_commit.substr(0, 12);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(shown.out);
    } catch (const nlohmann::json::parse_error& e) {
      throw GateError(source + ": malformed JSON at byte " + std::to_string(e.byte));
    }
    const Baseline base = parse_baseline(j, source);
    for (auto& v : compare_baseline_versions(base, now, rel)) report.violations.push_back(std::move(v));
  }
  const auto listed = git(root, {"ls-tree", "-r", "--name-only", report.base_commit, "--", rel_dir.generic_string()});
  if (listed.exit_status == 0) {
    std::size_t start = 0;
    while (start < listed.out.size()) {
      const auto end = listed.out.find('\n', start);
      const std::string line = listed.out.substr(start, end == std::string::npos ? std::string::npos : end - start);
      start = end == std::string::npos ? listed.out.size() : end + 1;
      if (line.size() >= 14 && line.substr(line.size() - 14) == ".BASELINE.json" && !current_files.count(line)) {
        report.notes.push_back(line + ": deleted since the merge-base (its gate no longer runs)");
      }
    }
  }
  return report;
}

nlohmann::json to_json(const MergeBaseReport& r) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : r.violations) violations.push_back({{"file", v.file}, {"metric", v.metric}, {"problem", v.problem}});
  return {{"ran", r.ran},
          {"skipped_reason", r.skipped_reason},
          {"target", r.target},
          {"base_commit", r.base_commit},
          {"files_checked", r.files_checked},
          {"notes", r.notes},
          {"violations", violations},
          {"ok", r.ok()}};
}

}  // namespace atlas::gates
