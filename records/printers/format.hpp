#pragma once
// Number formatting shared by the human-readable printers.
#include <cmath>
#include <cstdio>
#include <string>

#include "common/number_format.hpp"
#include "records/diff.hpp"

namespace atlas::records::printers {

/// atlas::format_number (the one way every printer writes a value), "-" for NaN.
inline std::string number(double v) { return format_number(v); }

/// One side's p50 in a diff: hex for an identity (a hash: %.6g would round two different hashes
/// to one string), "mixed" where that side's samples disagree, else number().
inline std::string value(const MetricDiff& m, bool side_a) {
  if (!is_identity_unit(m.unit)) return number(side_a ? m.p50_a : m.p50_b);
  if (side_a ? m.mixed_a : m.mixed_b) return "mixed";
  return identity_hex(side_a ? m.p50_a : m.p50_b, m.unit);
}

/// Signed percentage ("+11.43%", "+0.00043%"; atlas::format_percent), "-" for NaN.
inline std::string percent(double v) { return format_percent(v, true); }

/// The last column of a diff row: the timed-row caveat in brackets, then the judge's reason.
inline std::string note(const MetricDiff& m) {
  std::string s = m.caveat.empty() ? "" : "[" + m.caveat + "]";
  if (!m.why.empty()) s += (s.empty() ? "" : " ") + m.why;
  return s;
}

/// How the rows were judged, for the summary line.
inline std::string rule(const RecordDiff& d) {
  if (!d.options.rule_text.empty()) return d.options.rule_text;
  return "two-sided Mann-Whitney U, alpha " + number(d.options.alpha) + ", threshold " + number(d.options.threshold_pct) + "%";
}

/// p-value with three significant digits, "-" when no test ran.
inline std::string p_value(double p) {
  if (std::isnan(p)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", p);
  return buf;
}

/// "3f9a0c12b4de[-dirty] (branch)": a short, unambiguous-enough commit for headings.
inline std::string commit(const DiffSide& s) {
  std::string c = s.commit.size() > 12 ? s.commit.substr(0, 12) : s.commit;
  if (s.dirty) c += "-dirty";
  if (!s.branch.empty()) c += " (" + s.branch + ")";
  return c;
}

/// "1 regressed, 2 improved, ..." over every Change that occurs.
inline std::string counts(const RecordDiff& d) {
  std::string out;
  for (Change c : {Change::regressed, Change::changed, Change::improved, Change::noise, Change::unchanged,
                   Change::added, Change::removed, Change::incomparable}) {
    const int n = d.count(c);
    if (n == 0) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + to_string(c);
  }
  return out.empty() ? "no metrics" : out;
}

}  // namespace atlas::records::printers
