#include "trends/site.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/number_format.hpp"
#include "gates/report.hpp"
#include "trends/html_text.hpp"
#include "trends/svg_chart.hpp"

namespace atlas::trends {
namespace {

namespace fs = std::filesystem;

const char* kStyle =
    "body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin:.5em 0}"
    "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px;text-align:left}th{background:#f3f3f3}"
    ".regression{color:#cb181d;font-weight:bold}.improved{color:#238b45}.note{color:#666;font-size:13px}"
    "code{font-size:12px}section.metric{margin:1.2em 0}";

std::string page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(title) +
         "</title><style>" + kStyle + "</style></head><body>\n<h1>" + html_escape(title) + "</h1>\n" + body +
         "</body></html>\n";
}

std::string suite_of(const std::string& key) { return key.substr(0, key.find('/')); }

std::string line_dir(const Line& l) { return file_stem(l.gate_or_suite + "-" + l.cpu_id); }

std::string suite_page(const Line& l, const std::string& suite) { return line_dir(l) + "/" + file_stem(suite) + ".html"; }

std::string anchor(const std::string& key) { return "m-" + file_stem(key); }

std::string left_out_html(const LeftOut& o) {
  std::ostringstream s;
  s << "<table class=\"left-out\"><tr><th>left out</th><th>records</th></tr>";
  auto row = [&](const char* what, int n) { s << "<tr><td>" << what << "</td><td data-count=\"" << n << "\">" << n << "</td></tr>"; };
  row("invalid", o.invalid);
  row("made with test hooks", o.test_hooks);
  row("uncommitted code (-dirty)", o.dirty);
  row("another model", o.other_model);
  row("nightly shards (their merged record is used)", o.merged_shards);
  row("box not quiet (timed metrics only)", o.noisy);
  s << "</table>";
  for (const auto& m : o.other_models) s << "<p class=\"note\">another model: " << html_escape(m) << "</p>";
  if (o.timed_not_quiet > 0)
    s << "<p class=\"note\">" << o.timed_not_quiet
      << " timed metrics are not trended here: the machine class is not a quiet one (counted metrics are).</p>";
  return s.str();
}

std::string drift_cell(const SeriesTrend& t) {
  if (!t.drift) return "<td class=\"note\">" + html_escape(t.not_judged) + "</td>";
  const auto& v = t.drift->verdict;
  const std::string cls = t.drift->regression() ? "regression" : v.status == gates::VerdictStatus::improved ? "improved" : "";
  return "<td class=\"" + cls + "\">" + html_escape(std::string(gates::to_string(v.status)) + " " + gates::format_delta_pct(v.delta_pct) +
                                                    " vs " + t.drift->reference) +
         "</td>";
}

std::string line_section(const Line& l, const LineTrend& lt) {
  std::ostringstream s;
  s << "<section class=\"line\" id=\"" << html_escape(file_stem(l.id())) << "\"><h2>" << html_escape(l.gate_or_suite) << " on "
    << html_escape(l.cpu) << "</h2>\n";
  s << "<p>model " << html_escape(l.model) << "; " << l.commits.size() << " commits";
  if (!l.commits.empty()) s << ", " << html_escape(l.commits.front().sha.substr(0, 7)) << " to " << html_escape(l.commits.back().sha.substr(0, 7));
  s << "</p>\n";
  if (l.last_verdict) {
    const auto& v = *l.last_verdict;
    s << "<p>last gate verdict (" << html_escape(v.commit.substr(0, 12)) << "): <span class=\""
      << (v.overall == "regression" ? "regression" : "") << "\">" << html_escape(v.overall) << "</span>";
    for (const auto& r : v.reasons) s << "<br><span class=\"note\">" << html_escape(r) << "</span>";
    s << "</p>\n";
  }
  s << left_out_html(l.left_out);
  // Drift, failing first.
  s << "<h3>Drift</h3><table class=\"drift\"><tr><th>metric</th><th>level now</th></tr>";
  int drift_rows = 0;
  for (const bool failing : {true, false})
    for (const auto& t : lt.series) {
      if (!t.drift || t.drift->regression() != failing || (!failing && t.drift->verdict.status == gates::VerdictStatus::same)) continue;
      s << "<tr" << (failing ? " class=\"drift-regression\"" : "") << "><td><a href=\"" << html_escape(suite_page(l, suite_of(t.key)))
        << "#" << anchor(t.key) << "\">" << html_escape(t.key) << "</a></td>" << drift_cell(t) << "</tr>";
      ++drift_rows;
    }
  if (drift_rows == 0) s << "<tr><td colspan=\"2\">no metric moved past its tolerance</td></tr>";
  s << "</table>\n<h3>Steps found</h3><table class=\"steps\"><tr><th>metric</th><th>step</th></tr>";
  int step_rows = 0;
  for (const auto& t : lt.series)
    for (const auto& st : t.steps) {
      s << "<tr><td>" << html_escape(t.key) << "</td><td class=\"" << (st.worse ? "regression" : "improved") << "\">"
        << html_escape(step_text(l, l.series.at(t.key), st)) << "</td></tr>";
      ++step_rows;
    }
  if (step_rows == 0) s << "<tr><td colspan=\"2\">none</td></tr>";
  s << "</table>\n";
  // Moved most over the last commits.
  std::vector<const SeriesTrend*> moved;
  for (const auto& t : lt.series)
    if (!std::isnan(t.moved_pct)) moved.push_back(&t);
  std::stable_sort(moved.begin(), moved.end(),
                   [](const SeriesTrend* a, const SeriesTrend* b) { return std::fabs(a->moved_pct) > std::fabs(b->moved_pct); });
  if (moved.size() > 10) moved.resize(10);
  s << "<h3>Moved most</h3><table class=\"moved\"><tr><th>metric</th><th>change over the last commits</th></tr>";
  for (const auto* t : moved)
    s << "<tr><td><a href=\"" << html_escape(suite_page(l, suite_of(t->key))) << "#" << anchor(t->key) << "\">" << html_escape(t->key)
      << "</a></td><td>" << html_escape(gates::format_delta_pct(t->moved_pct)) << "</td></tr>";
  s << "</table>\n<p>suites: ";
  std::set<std::string> suites;
  for (const auto& [key, series] : l.series) suites.insert(suite_of(key));
  for (const auto& su : suites) s << "<a href=\"" << html_escape(suite_page(l, su)) << "\">" << html_escape(su) << "</a> ";
  s << "</p></section>\n";
  return s.str();
}

std::string suite_body(const Line& l, const LineTrend& lt, const std::string& suite) {
  std::ostringstream s;
  s << "<p><a href=\"../index.html#" << html_escape(file_stem(l.id())) << "\">" << html_escape(l.machine_class) << "</a>: "
    << html_escape(l.gate_or_suite) << " on " << html_escape(l.cpu) << ", model " << html_escape(l.model) << "</p>\n";
  s << "<p class=\"note\">Each point is one commit: the median of every sample of its records, the band their p10-p90; "
       "the dashed orange line is the BASELINE, dashed verticals the steps found, triangles the stored gate verdicts. "
       "Hover a point for its values and the diff against the commit before.</p>\n";
  for (const auto& t : lt.series) {
    if (suite_of(t.key) != suite) continue;
    const Series& series = l.series.at(t.key);
    s << "<section class=\"metric\" id=\"" << anchor(t.key) << "\"><h3>" << html_escape(t.key) << " <span class=\"note\">("
      << html_escape(series.unit) << ", " << records::to_string(series.kind) << ", " << records::to_string(series.better)
      << " is better)</span></h3>\n";
    s << svg_chart(l, series, t);
    s << "<p>drift: " << (t.drift ? html_escape(std::string(gates::to_string(t.drift->verdict.status)) + " " +
                                                gates::format_delta_pct(t.drift->verdict.delta_pct) + " vs " + t.drift->reference +
                                                ": " + t.drift->verdict.why)
                                   : html_escape(t.not_judged))
      << "</p>\n";
    for (const auto& st : t.steps) s << "<p class=\"note\">step " << html_escape(step_text(l, series, st)) << "</p>\n";
    s << "</section>\n";
  }
  return s.str();
}

}  // namespace

std::vector<fs::path> write_site(const Report& r, const fs::path& out_dir) {
  std::vector<fs::path> written;
  const History& h = r.history;
  std::map<std::string, std::vector<std::size_t>> by_class;  // machine class -> trend indexes
  for (std::size_t i = 0; i < r.trends.size(); ++i) by_class[h.lines[r.trends[i].line].machine_class].push_back(i);

  std::ostringstream index;
  index << "<p>" << h.records_read << " records in " << h.lines.size() << " lines. Generated from the record store; "
        << "no script or network needed.</p>\n";
  const auto failing = r.drift_regressions();
  index << "<p class=\"" << (failing.empty() ? "" : "regression") << "\" id=\"result\">"
        << (failing.empty() ? std::string("no metric drifted past its tolerance")
                            : std::to_string(failing.size()) + " metrics drifted past their tolerance")
        << "</p>\n";
  if (!failing.empty()) {
    index << "<ul class=\"drift-regressions\">";
    for (const auto& f : failing) index << "<li>" << html_escape(f) << "</li>";
    index << "</ul>\n";
  }
  index << "<h2>Machine classes</h2><ul>";
  for (const auto& [cls, idx] : by_class)
    index << "<li><a href=\"" << html_escape(file_stem(cls)) << "/index.html\">" << html_escape(cls) << "</a> (" << idx.size()
          << " lines)</li>";
  index << "</ul>\n";
  if (!h.unparsable.empty()) {
    index << "<h2>Skipped: records that do not parse</h2><ul class=\"unparsable\">";
    for (const auto& u : h.unparsable) index << "<li><code>" << html_escape(u.path.string()) << "</code>: " << html_escape(u.error) << "</li>";
    index << "</ul>\n";
  }
  const fs::path index_path = out_dir / "index.html";
  write_file_atomic(index_path, page("atlas-bench report", index.str()));
  written.push_back(index_path);

  for (const auto& [cls, idx] : by_class) {
    std::ostringstream body;
    body << "<p><a href=\"../index.html\">all machine classes</a></p>\n";
    for (const std::size_t i : idx) {
      const LineTrend& lt = r.trends[i];
      const Line& l = h.lines[lt.line];
      body << line_section(l, lt);
      std::set<std::string> suites;
      for (const auto& [key, series] : l.series) suites.insert(suite_of(key));
      for (const auto& su : suites) {
        const fs::path p = out_dir / file_stem(cls) / suite_page(l, su);
        write_file_atomic(p, page(su + ": " + l.gate_or_suite + " on " + cls, suite_body(l, lt, su)));
        written.push_back(p);
      }
    }
    const fs::path p = out_dir / file_stem(cls) / "index.html";
    write_file_atomic(p, page(cls + ": atlas-bench report", body.str()));
    written.push_back(p);
  }
  return written;
}

}  // namespace atlas::trends
