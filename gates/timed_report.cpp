#include "gates/timed_report.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "common/markdown_text.hpp"
#include "common/number_format.hpp"
#include "gates/report.hpp"

namespace atlas::gates {
namespace {

std::string pct(double x, bool sign = true) { return format_fraction_percent(x, sign); }

std::string interval(const records::PairedVerdict& v) {
  if (v.rounds == 0) return "-";
  char confidence[32];
  std::snprintf(confidence, sizeof confidence, "%.4g%%", 100 * v.confidence);
  // Appended piece by piece: gcc 12 reports a false -Wrestrict on chained string + (see
  // CMakeLists.txt).
  std::string out = "[";
  out += pct(v.ci_lo);
  out += ", ";
  out += pct(v.ci_hi);
  out += "] at ";
  out += confidence;
  return out;
}

std::string value(const std::optional<double>& v, const std::string& unit) {
  return v ? format_value(v) + (unit.empty() ? "" : " " + unit) : "-";
}

std::string header_line(const TimedReport& t) {
  const auto& o = t.outcome;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f s", o.elapsed_s);
  std::string s = "timed: head vs " +
                  (t.base_commit.empty() ? std::string("base binary ") + t.base_binary
                                         : "merge-base " + t.base_commit.substr(0, 12)) +
                  ", interleaved AB BA, " + std::to_string(o.rounds.size()) + " rounds in " + buf;
  if (!o.look_log.empty()) {
    s += ", judged at " + std::to_string(o.look_log.size()) + (o.look_log.size() == 1 ? " look (" : " looks (");
    for (std::size_t i = 0; i < o.look_log.size(); ++i) s += (i ? ", " : "") + std::to_string(o.look_log[i].rounds);
    s += " rounds)";
  }
  if (!o.stop_reason.empty()) s += " (stopped: " + o.stop_reason + ")";
  if (t.inject_decode_delay_us > 0) {
    std::snprintf(buf, sizeof buf, "%g", t.inject_decode_delay_us);
    s += "; test hook: head decode delayed " + std::string(buf) + " us per token";
  }
  return s;
}

std::string cell(const std::string& s) { return md_text(s); }  // common/markdown_text.hpp

}  // namespace

Overall timed_overall(const TimedReport& t) {
  if (!t.ran) return t.skipped_is_failure ? Overall::inconclusive : Overall::pass;
  return t.outcome.overall;
}

void print_timed_text(const TimedReport& t, std::ostream& out) {
  if (!t.build_line.empty()) out << t.build_line << "\n";
  if (!t.ran) {
    out << "timed: not judged: " << t.skipped_reason << "\n";
    return;
  }
  out << header_line(t) << "\n";
  using Row = std::array<std::string, 9>;
  std::vector<Row> rows = {{"metric", "tolerance", "base", "head", "change", "interval", "noise (MDE)", "verdict", "why"}};
  for (const auto& v : t.outcome.verdicts) {
    rows.push_back({v.metric.key, pct(v.metric.tolerance, false), value(v.base_median, v.unit), value(v.head_median, v.unit),
                    v.paired.rounds ? pct(v.paired.change) : "-", interval(v.paired), pct(v.paired.mde, false),
                    to_string(v.status), v.why});
  }
  std::array<std::size_t, 9> width{};
  for (const auto& row : rows)
    for (std::size_t c = 0; c + 1 < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      out << row[c];
      if (c + 1 < row.size()) out << std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << "\n";
  }
  const auto& o = t.outcome;
  if (o.disturbed_rounds > 0) {
    out << "timed: " << o.disturbed_rounds << " of " << o.rounds.size() << " rounds disturbed by load, not judged";
    for (const auto& r : o.rounds)
      if (r.disturbed) {
        out << " (first: round " << r.round + 1 << ", " << r.why << ")";
        break;
      }
    out << "\n";
  }
  if (!o.failure.empty()) out << "timed: stopped: " << o.failure << "\n";
}

void print_timed_markdown(const TimedReport& t, std::ostream& out) {
  out << "\n**Timed metrics** ";
  if (!t.ran) {
    out << "not judged: " << cell(t.skipped_reason) << "\n";
    if (!t.build_line.empty()) out << "\n" << cell(t.build_line) << "\n";
    return;
  }
  out << "(" << cell(header_line(t)) << ")\n\n";
  out << "| metric | tolerance | base | head | change | interval | noise (MDE) | verdict | why |\n"
      << "|---|---:|---:|---:|---:|---|---:|---|---|\n";
  for (const auto& v : t.outcome.verdicts) {
    out << "| " << md_code(v.metric.key) << " | " << pct(v.metric.tolerance, false) << " | " << value(v.base_median, v.unit)
        << " | " << value(v.head_median, v.unit) << " | " << (v.paired.rounds ? pct(v.paired.change) : "-") << " | "
        << interval(v.paired) << " | " << pct(v.paired.mde, false) << " | " << to_string(v.status) << " | " << cell(v.why)
        << " |\n";
  }
  if (t.outcome.disturbed_rounds > 0)
    out << "\n" << t.outcome.disturbed_rounds << " of " << t.outcome.rounds.size() << " rounds disturbed by load.\n";
  if (!t.build_line.empty()) out << "\n" << cell(t.build_line) << "\n";
}

nlohmann::json to_json(const TimedReport& t) {
  nlohmann::json j = {{"ran", t.ran},
                      {"skipped_reason", t.skipped_reason},
                      {"base_commit", t.base_commit},
                      {"base_binary", t.base_binary},
                      {"head_binary", t.head_binary},
                      {"build", t.build_line},
                      {"inject_decode_delay_us", t.inject_decode_delay_us},
                      {"overall", to_string(timed_overall(t))}};
  if (t.ran) j["outcome"] = to_json(t.outcome);
  return j;
}

}  // namespace atlas::gates
