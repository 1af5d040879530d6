#include "gates/merge_base_check.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "common/json_file.hpp"
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
std::string tol_text(const Tolerance& t) { return "relative " + num(t.relative) + ", absolute " + num(t.absolute); }

// Whether the entries added since the merge-base lead, step by step, from `from` to `to`: each
// entry that names a change of this field must start where the previous one ended. An entry
// licenses exactly the move it names, so an accept whose old equals its new (or one written
// for another value, tolerance or unit) licenses nothing.
template <class T, class Step>
bool walked(const std::vector<HistoryEntry>& added, const T& from, const T& to, Step step) {
  T at = from;
  for (const auto& h : added) {
    if (const auto move = step(h); move && move->first == at) at = move->second;
  }
  return at == to;
}

// The value steps of the added entries: an accept may move either way; a ratchet only tightens
// (a hand-written "ratchet" entry that loosens is not a review). A hash (identity) value moves
// only with an accept: neither direction is better.
std::optional<std::pair<double, double>> value_step(const HistoryEntry& h, records::Better better, bool identity) {
  if (!h.old_value || !h.new_value) return std::nullopt;
  if (h.action == HistoryAction::accept) return std::pair{*h.old_value, *h.new_value};
  if (h.action == HistoryAction::ratchet && !identity && !worse(better, *h.old_value, *h.new_value))
    return std::pair{*h.old_value, *h.new_value};
  return std::nullopt;
}

template <class Field>
std::optional<std::pair<std::string, std::string>> string_step(const HistoryEntry& h, Field field) {
  const auto& c = h.*field;
  if (h.action != HistoryAction::accept || !c) return std::nullopt;
  return std::pair{c->from, c->to};
}

void check_metric(const std::string& file, const std::string& key, const BaselineMetric& base, const BaselineMetric& now,
                  bool file_frozen_at_base, bool file_unfrozen_since, std::vector<BaselineViolation>& out) {
  if (!history_kept(base.history, now.history)) {
    out.push_back({file, key, "history entries present at the merge-base were removed or edited (history is append-only)"});
  }
  const auto added = added_entries(base.history, now.history);

  const bool changed = base.value != now.value || base.samples != now.samples || base.unit != now.unit ||
                       base.kind != now.kind || base.better != now.better || !(base.tolerance == now.tolerance);
  if ((base.frozen || file_frozen_at_base) && changed && !has_action(added, HistoryAction::unfreeze) &&
      !file_unfrozen_since) {
    out.push_back({file, key, "changed while frozen at the merge-base, without an unfreeze entry"});
  }
  if (base.frozen && !now.frozen && !has_action(added, HistoryAction::unfreeze)) {
    out.push_back({file, key, "unfrozen without an unfreeze history entry"});
  }
  const std::pair<const char*, std::optional<FieldChange<std::string>> HistoryEntry::*> shape_fields[] = {
      {"unit", &HistoryEntry::unit}, {"kind", &HistoryEntry::kind}, {"better", &HistoryEntry::better}};
  const std::string base_shape[] = {base.unit, records::to_string(base.kind), records::to_string(base.better)};
  const std::string now_shape[] = {now.unit, records::to_string(now.kind), records::to_string(now.better)};
  bool shape_moved = false;
  for (std::size_t i = 0; i < 3; ++i) {
    if (base_shape[i] == now_shape[i]) continue;
    shape_moved = true;
    const auto field = shape_fields[i].second;
    if (!walked(added, base_shape[i], now_shape[i], [&](const HistoryEntry& h) { return string_step(h, field); }))
      out.push_back({file, key,
                     std::string(shape_fields[i].first) + " changed from " + base_shape[i] + " to " + now_shape[i] +
                         " without an accept history entry naming that change (`atlas-bench baseline accept`)"});
  }
  if (shape_moved) return;  // values in different units do not compare
  const bool identity = records::is_identity_unit(now.unit);
  if ((identity ? base.value != now.value : worse(base.better, base.value, now.value)) &&
      !walked(added, base.value, now.value, [&](const HistoryEntry& h) { return value_step(h, now.better, identity); })) {
    out.push_back({file, key,
                   std::string(identity ? "hash value changed" : "value loosened") + " from " + num(base.value) +
                       " to " + num(now.value) +
                       " without an accept history entry from the old value to the new one (`atlas-bench baseline "
                       "accept`)"});
  }
  const bool looser = now.tolerance.relative > base.tolerance.relative || now.tolerance.absolute > base.tolerance.absolute;
  if (looser && !walked(added, base.tolerance, now.tolerance, [](const HistoryEntry& h) {
        return h.action == HistoryAction::accept && h.tolerance
                   ? std::optional<std::pair<Tolerance, Tolerance>>{std::pair{h.tolerance->from, h.tolerance->to}}
                   : std::nullopt;
      })) {
    out.push_back({file, key,
                   "tolerance loosened (" + tol_text(base.tolerance) + " -> " + tol_text(now.tolerance) +
                       ") without an accept history entry naming that tolerance change"});
  }
}

std::string describe(const std::string& file, const std::string& metric, const HistoryEntry& h) {
  std::string out = file;
  if (!metric.empty()) out.append(" ").append(metric);
  out.append(": ").append(to_string(h.action));
  if (h.old_value || h.new_value) {
    out.append(" ").append(h.old_value ? num(*h.old_value) : "-");
    out.append(" -> ").append(h.new_value ? num(*h.new_value) : "-");
  }
  if (h.tolerance) out.append(", tolerance ").append(tol_text(h.tolerance->from)).append(" -> ").append(tol_text(h.tolerance->to));
  for (const auto& [name, c] : {std::pair{"unit", &h.unit}, std::pair{"kind", &h.kind}, std::pair{"better", &h.better}})
    if (*c) out.append(", ").append(name).append(" ").append((*c)->from).append(" -> ").append((*c)->to);
  out.append(" (").append(h.commit.substr(0, 12)).append(" ").append(h.date).append("): \"").append(h.reason).append("\"");
  return out;
}

bool listed_action(HistoryAction a) {
  return a == HistoryAction::accept || a == HistoryAction::remove || a == HistoryAction::unfreeze;
}

// A suite's identity (the config its values were measured with) moves only with an accept of one
// of that suite's metrics (accept adopts the config): a shrunk suite config plus an edited
// identity made a smaller workload the judge. The model likewise needs some accept.
void check_identity(const std::string& file, const Baseline& base, const Baseline& now, VersionCheck& out) {
  if (base.identity == now.identity) return;
  if (!base.identity.is_object()) {
    // No identity at the merge-base: every pin is new. A new pin only narrows what the stored
    // values may be judged against (an unpinned suite is inconclusive), so it needs no accept,
    // but the reviewer sees it beside the verdict like any other config change.
    if (now.identity.is_object() && now.identity.contains("suites"))
      for (const auto& [suite, config] : now.identity["suites"].items())
        out.changes.push_back(file + ": identity of suite " + suite + " pinned (new since the merge-base)");
    return;
  }
  auto accepted_in = [&](const std::string& suite) {
    for (const auto& [key, m] : now.metrics) {
      if (!suite.empty() && key.rfind(suite + "/", 0) != 0) continue;
      const auto it = base.metrics.find(key);
      const auto added = added_entries(it == base.metrics.end() ? std::vector<HistoryEntry>{} : it->second.history, m.history);
      if (has_action(added, HistoryAction::accept)) return true;
    }
    return false;
  };
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& bs = base.identity.contains("suites") ? base.identity["suites"] : none;
  const nlohmann::json& ns = now.identity.is_object() && now.identity.contains("suites") ? now.identity["suites"] : none;
  for (const auto& [suite, config] : bs.items()) {
    if (ns.contains(suite) && ns[suite] == config) continue;
    out.changes.push_back(file + ": identity of suite " + suite + " changed");
    if (!accepted_in(suite))
      out.violations.push_back({file, "", "identity.suites." + suite +
                                              " changed since the merge-base without an accept of one of its metrics"});
  }
  for (const auto& [suite, config] : ns.items())
    if (!bs.contains(suite)) out.changes.push_back(file + ": identity of suite " + suite + " pinned (new since the merge-base)");
  const nlohmann::json bm = base.identity.value("model", nlohmann::json());
  const nlohmann::json nm = now.identity.is_object() ? now.identity.value("model", nlohmann::json()) : nlohmann::json();
  if (bm != nm) {
    out.changes.push_back(file + ": identity.model changed");
    if (!accepted_in("")) out.violations.push_back({file, "", "identity.model changed since the merge-base without an accept"});
  }
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

bool is_baseline_name(const std::string& name) {
  return name.size() >= 14 && name.compare(name.size() - 14, 14, ".BASELINE.json") == 0;
}

Baseline parse_text(const std::string& text, const std::string& source) {
  nlohmann::json j;
  try {
    j = parse_json_text(text, source);
  } catch (const InputError& e) {
    throw GateError(e.what());
  }
  return parse_baseline(j, source);
}

// One current file against the merge-base's copy at `rel` (or, when there is none, against its
// own history).
void check_file(const MergeBase& mb, const std::filesystem::path& file, const std::string& rel, const std::string& shown_as,
                MergeBaseReport& report) {
  const Baseline now = load_baseline(file);
  const auto text = text_at_merge_base(mb, rel);
  if (!text) {
    // No older version to compare with: the file's own history is the only witness, so a value
    // edited by hand after `baseline init` (a loosened gate nobody reviewed) is caught here.
    report.notes.push_back(shown_as + ": new since the merge-base (each value checked against its own history)");
    for (const auto& [key, m] : now.metrics) {
      if (const auto problem = history_mismatch(m); !problem.empty())
        report.violations.push_back({shown_as, key, "new since the merge-base, and its " + problem});
    }
    return;
  }
  const Baseline base = parse_text(*text, rel + "@" + mb.commit.substr(0, 12));
  auto checked = compare_baseline_versions(base, now, shown_as);
  for (auto& v : checked.violations) report.violations.push_back(std::move(v));
  for (auto& c : checked.changes) report.changes.push_back(std::move(c));
}

}  // namespace

VersionCheck compare_baseline_versions(const Baseline& base, const Baseline& current, const std::string& file) {
  VersionCheck out;
  if (!history_kept(base.history, current.history)) {
    out.violations.push_back({file, "", "file-level history entries present at the merge-base were removed or edited"});
  }
  const auto added = added_entries(base.history, current.history);
  for (const auto& h : added)
    if (listed_action(h.action)) out.changes.push_back(describe(file, h.metric, h));
  const bool file_unfrozen_since = has_action(added, HistoryAction::unfreeze);
  if (base.frozen && !current.frozen && !file_unfrozen_since) {
    out.violations.push_back({file, "", "file unfrozen without an unfreeze history entry"});
  }
  for (const auto& [key, bm] : base.metrics) {
    const auto it = current.metrics.find(key);
    if (it == current.metrics.end()) {
      const bool removed = std::any_of(added.begin(), added.end(), [&key](const HistoryEntry& h) {
        return h.action == HistoryAction::remove && h.metric == key;
      });
      if (!removed) {
        out.violations.push_back(
            {file, key, "metric removed without a remove history entry (`atlas-bench baseline accept --remove`)"});
      } else if (base.frozen && !file_unfrozen_since) {
        out.violations.push_back({file, key, "metric removed from a file frozen at the merge-base, without an unfreeze entry"});
      }
      continue;
    }
    for (const auto& h : added_entries(bm.history, it->second.history))
      if (listed_action(h.action)) out.changes.push_back(describe(file, key, h));
    check_metric(file, key, bm, it->second, base.frozen, file_unfrozen_since, out.violations);
  }
  check_identity(file, base, current, out);
  return out;
}

MergeBaseReport check_merge_base(const MergeBase& mb, const std::filesystem::path& baselines_dir,
                                 const JudgedBaseline* judged) {
  namespace fs = std::filesystem;
  MergeBaseReport report;
  report.target = mb.target;
  if (!mb.found()) {
    report.skipped_reason = mb.why_not;
    // Outside git nothing can be compared, which is only a note, unless a target was asked for
    // (--target-branch, or the CI said this is a merge request): then a comparison was expected.
    report.conclusive = mb.state == MergeBaseState::not_git && mb.target_source == "default";
    return report;
  }
  report.base_commit = mb.commit;
  report.ran = true;
  std::error_code ec;
  // A symlink anywhere under the folder is refused: a BASELINE linked to a loosened copy
  // elsewhere read as "new" and the real path as "deleted", and neither was checked.
  if (fs::is_symlink(baselines_dir, ec))
    report.violations.push_back({baselines_dir.string(), "", "the baselines folder is a symlink (refused)"});
  std::set<std::string> current_files;
  const auto rel_dir = path_in_checkout(mb, baselines_dir);
  if (fs::is_directory(baselines_dir, ec) && rel_dir) {
    for (auto it = fs::recursive_directory_iterator(baselines_dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      const auto rel = fs::path(*rel_dir) / it->path().lexically_relative(baselines_dir);
      if (it->is_symlink()) {
        report.violations.push_back({rel.generic_string(), "",
                                     "a symlink under the baselines folder (refused: a BASELINE must be the committed "
                                     "file itself, not a link to a copy elsewhere)"});
        continue;
      }
      if (it->is_regular_file() && is_baseline_name(it->path().filename().string()))
        current_files.insert(rel.generic_string());
    }
  }
  for (const auto& rel : current_files) {
    report.files_checked.push_back(rel);
    if (std::any_of(report.violations.begin(), report.violations.end(), [&](const auto& v) { return v.file == rel; }))
      continue;
    check_file(mb, mb.root / rel, rel, rel, report);
  }
  if (judged && !judged->file.empty() && fs::exists(judged->file)) {
    const auto inside = path_in_checkout(mb, judged->file);
    report.judged_file = inside.value_or(judged->repo_path);
    if (!inside || !current_files.count(*inside)) {
      // The gate reads a BASELINE outside the folder checked above (--baselines-dir elsewhere,
      // e.g. added through the Makefile's GATE_ARGS): it is checked against the merge-base's copy
      // of the committed file it stands in for.
      const std::string shown = judged->file.string() + " (judged in place of " + judged->repo_path + ")";
      if (fs::is_symlink(judged->file, ec)) {
        report.violations.push_back({shown, "", "the judged BASELINE is a symlink (refused)"});
      } else {
        check_file(mb, judged->file, inside.value_or(judged->repo_path), shown, report);
      }
    }
    report.judged_file_at_merge_base = text_at_merge_base(mb, report.judged_file).has_value();
  }
  if (rel_dir) {
    const auto listed = gates::run_process({"git", "ls-tree", "-r", "--name-only", mb.commit, "--", *rel_dir}, mb.root);
    if (listed.exit_status == 0) {
      for (const auto& line : lines(listed.out)) {
        if (!is_baseline_name(line) || current_files.count(line)) continue;
        const bool linked = fs::is_symlink(mb.root / line, ec);
        if (!linked) report.notes.push_back(line + ": deleted since the merge-base (its gate no longer runs)");
      }
    }
  }
  return report;
}

MergeBaseReport check_merge_base(const std::filesystem::path& baselines_dir, const std::string& target) {
  return check_merge_base(find_merge_base(baselines_dir, choose_target(target, "", [](const char*) { return std::string(); })),
                          baselines_dir);
}

nlohmann::json to_json(const MergeBaseReport& r) {
  nlohmann::json violations = nlohmann::json::array();
  for (const auto& v : r.violations) violations.push_back({{"file", v.file}, {"metric", v.metric}, {"problem", v.problem}});
  return {{"ran", r.ran},
          {"conclusive", r.conclusive},
          {"skipped_reason", r.skipped_reason},
          {"target", r.target},
          {"base_commit", r.base_commit},
          {"files_checked", r.files_checked},
          {"notes", r.notes},
          {"violations", violations},
          {"changes", r.changes},
          {"judged_file", r.judged_file},
          {"judged_file_at_merge_base", r.judged_file_at_merge_base},
          {"ok", r.ok()}};
}

}  // namespace atlas::gates
