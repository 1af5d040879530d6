#include "trends/report.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "common/number_format.hpp"
#include "gates/report.hpp"

namespace atlas::trends {
namespace {

std::string left_out_text(const LeftOut& l) {
  std::string t;
  auto add = [&](int n, const std::string& what) {
    if (n > 0) t += (t.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(l.invalid, "invalid");
  add(l.test_hooks, "made with test hooks");
  add(l.dirty, "of uncommitted code (-dirty)");
  add(l.other_model, "of another model");
  add(l.merged_shards, "nightly shards whose merged record is used");
  return t;
}

const Series& series_of(const Line& line, const std::string& key) { return line.series.at(key); }

}  // namespace

std::string step_text(const Line& line, const Series& s, const Step& st) {
  std::string t;
  if (s.identity) {
    t = "changed (" + records::identity_hex(st.before, s.unit) + " to " + records::identity_hex(st.after, s.unit) + ")";
  } else {
    t = gates::format_delta_pct(std::isnan(st.delta_pct) ? std::optional<double>() : st.delta_pct) + " (" +
        format_number(st.before) + " to " + format_number(st.after) + " " + s.unit + ")";
  }
  t += " between " + line.commits[st.from].sha.substr(0, 7) + ".." + line.commits[st.to].sha.substr(0, 7);
  t += s.kind == records::MetricKind::timed && !s.identity ? ", confidence " + format_number(st.confidence) : ", exact";
  if (st.worse) t += ", worse";
  return t;
}

std::vector<std::string> Report::drift_regressions() const {
  std::vector<std::string> out;
  for (const auto& lt : trends)
    for (const auto& t : lt.series)
      if (t.drift && t.drift->regression()) out.push_back(history.lines[lt.line].id() + " " + t.key);
  return out;
}

Report make_report(const HistoryOptions& options, const TrendSettings& settings) {
  Report r;
  r.settings = settings;
  r.history = load_history(options);
  r.trends = analyse(r.history, options, settings);
  return r;
}

ExitCode exit_code(const Report& r) { return r.drift_regressions().empty() ? ExitCode::pass : ExitCode::regression; }

void print_summary(const Report& r, std::ostream& out) {
  const History& h = r.history;
  LeftOut total;
  for (const auto& l : h.lines) total += l.left_out;
  out << "report: " << h.records_read << " records read into " << h.lines.size() << " lines";
  if (const auto t = left_out_text(total); !t.empty()) out << "; left out: " << t;
  if (total.noisy > 0) out << "; timed metrics of " << total.noisy << " records from a box that was not quiet left out";
  out << "\n";
  for (const auto& u : h.unparsable) out << "  skipped (does not parse): " << u.path.string() << ": " << u.error << "\n";
  for (const auto& l : h.lines) {
    if (l.left_out.timed_not_quiet > 0)
      out << "  " << l.id() << ": " << l.left_out.timed_not_quiet
          << " timed metrics not trended (the machine class is not a quiet one; counted metrics are)\n";
    for (const auto& m : l.left_out.other_models) out << "  " << l.id() << ": records of another model left out: " << m << "\n";
  }
  const auto& cp = r.settings.change_points;
  out << "steps (timed: E-divisive means, p <= " << format_number(cp.max_p) << ", " << cp.permutations
      << " permutations, seed " << cp.seed << "; counted: every change):\n";
  int steps = 0;
  for (const auto& lt : r.trends) {
    const Line& line = h.lines[lt.line];
    for (const auto& t : lt.series) {
      for (const auto& st : t.steps) {
        out << "  " << line.id() << " " << t.key << ": " << step_text(line, series_of(line, t.key), st) << "\n";
        ++steps;
      }
    }
  }
  if (steps == 0) out << "  none\n";
  out << "drift (the level now against the BASELINE since its last ratchet/accept, else the history's start):\n";
  int shown = 0;
  for (const bool failing : {true, false}) {
    for (const auto& lt : r.trends) {
      const Line& line = h.lines[lt.line];
      for (const auto& t : lt.series) {
        if (!t.drift) continue;
        const auto& v = t.drift->verdict;
        if (t.drift->regression() != failing) continue;
        if (!failing && v.status == gates::VerdictStatus::same) continue;
        out << "  " << (failing ? "REGRESSION " : std::string(gates::to_string(v.status)) + " ") << line.id() << " " << t.key
            << ": " << gates::format_delta_pct(v.delta_pct) << " over the last " << t.drift->level_commits << " commits vs "
            << t.drift->reference << ": " << v.why << "\n";
        ++shown;
      }
    }
  }
  if (shown == 0) out << "  no metric moved past its tolerance\n";
  const auto failing = r.drift_regressions();
  out << (failing.empty() ? "result: pass" : "result: REGRESSION (" + std::to_string(failing.size()) + " metrics drifted)")
      << "\n";
}

}  // namespace atlas::trends
