#include "records/diff.hpp"

#include "records/test_hooks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "common/natural_order.hpp"
#include "records/error.hpp"
#include "records/stats.hpp"

namespace atlas::records {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double p50_of(const Metric& m) { return m.samples.empty() ? kNaN : stats::median(m.samples); }

double delta_pct(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return 0.0;
  if (a == 0.0) return kNaN;
  return 100.0 * (b - a) / std::fabs(a);
}

// improved/regressed from the sign of b - a and which direction is better.
Change direction(double a, double b, Better better) {
  const bool lower = b < a;
  return (lower == (better == Better::lower)) ? Change::improved : Change::regressed;
}

DiffSide side_of(const Record& r, const std::string& label) {
  return {label, r.git.commit, r.git.branch, r.machine.machine_class, r.gate_or_suite, r.start_utc, r.git.dirty, r.valid};
}

/// A row's name and the meta data it is judged by (the newer side's, where both have one); no
/// samples, no verdict yet.
MetricDiff row_for(const std::string& suite, const std::string& name, const Metric& m) {
  MetricDiff d;
  d.suite = suite;
  d.metric = name;
  d.unit = m.unit;
  d.better = m.better;
  d.kind = m.kind;
  return d;
}

MetricDiff one_sided(const std::string& suite, const std::string& name, const Metric& m, bool in_a) {
  MetricDiff d = row_for(suite, name, m);
  (in_a ? d.n_a : d.n_b) = static_cast<int>(m.samples.size());
  d.p50_a = in_a ? p50_of(m) : kNaN;
  d.p50_b = in_a ? kNaN : p50_of(m);
  d.delta_pct = kNaN;
  d.p_value = kNaN;
  d.test = "none";
  d.change = in_a ? Change::removed : Change::added;
  return d;
}

}  // namespace

std::string box_caveat(const Record& r) {
  const auto& q = r.quiet_box;
  if (!q.is_object()) return "not quiet-box checked";
  const auto before = q.find("before");
  if (before == q.end() || !before->is_object()) return "not quiet-box checked";
  const auto quiet = before->find("quiet");
  if (quiet != before->end() && quiet->is_boolean() && !quiet->get<bool>()) {
    std::string why = "its quiet-box check said not quiet";
    const auto reasons = before->find("reasons");
    if (reasons != before->end() && reasons->is_array() && !reasons->empty()) {
      why += " (";
      for (std::size_t i = 0; i < reasons->size(); ++i) {
        const auto& x = (*reasons)[i];
        why += (i ? "; " : "") + (x.is_string() ? x.get<std::string>() : x.dump());
      }
      why += ")";
    }
    return why;
  }
  const auto noisy = q.find("allow_noisy");
  if (noisy != q.end() && noisy->is_boolean() && noisy->get<bool>()) return "judged with --allow-noisy";
  if (quiet == before->end() || !quiet->is_boolean()) return "not quiet-box checked";
  return "";
}

const char* to_string(Change c) {
  switch (c) {
    case Change::improved: return "improved";
    case Change::regressed: return "regressed";
    case Change::changed: return "changed";
    case Change::unchanged: return "unchanged";
    case Change::noise: return "undecided";
    case Change::added: return "added";
    case Change::removed: return "removed";
    case Change::incomparable: return "incomparable";
  }
  return "?";
}

ExitCode exit_code_of(Change c) {
  switch (c) {
    case Change::regressed:
    case Change::changed:
    case Change::incomparable:  // exit 0 here once: a metric whose unit or kind moved passed silently
      return ExitCode::regression;
    case Change::noise: return ExitCode::inconclusive;
    case Change::improved:
    case Change::unchanged:
    case Change::added:
    case Change::removed: return ExitCode::pass;
  }
  return ExitCode::regression;
}

ExitCode exit_code(const RecordDiff& d) {
  ExitCode worst = ExitCode::pass;
  for (const auto& m : d.metrics) {
    const ExitCode e = exit_code_of(m.change);
    if (e == ExitCode::regression) return e;
    if (e == ExitCode::inconclusive) worst = e;
  }
  return worst;
}

int RecordDiff::count(Change c) const {
  return static_cast<int>(std::count_if(metrics.begin(), metrics.end(), [c](const MetricDiff& d) { return d.change == c; }));
}

MetricDiff diff_metric(const std::string& suite, const std::string& name, const Metric& a, const Metric& b,
                       const DiffOptions& options) {
  MetricDiff d = row_for(suite, name, b);
  d.n_a = static_cast<int>(a.samples.size());
  d.n_b = static_cast<int>(b.samples.size());
  d.p50_a = p50_of(a);
  d.p50_b = p50_of(b);
  d.delta_pct = delta_pct(d.p50_a, d.p50_b);
  d.p_value = kNaN;
  d.test = "none";
  if (a.unit != b.unit || a.kind != b.kind) {
    d.change = Change::incomparable;
    return d;
  }
  if (d.n_a == 0 || d.n_b == 0) {
    d.change = (d.n_a == 0 && d.n_b == 0) ? Change::unchanged : Change::noise;
    return d;
  }
  if (options.judge && !is_identity_unit(d.unit)) {
    if (const auto j = options.judge(suite, name, a, b)) {
      d.change = j->change;
      d.test = j->rule;
      d.why = j->why;
      d.p_value = j->p_value.value_or(kNaN);
      d.significant = d.change == Change::improved || d.change == Change::regressed;
      return d;
    }
  }
  if (a.kind != MetricKind::timed) {
    d.test = "exact-compare";
    if (is_identity_unit(d.unit)) {
      // Every sample counts: runs of one side that disagree are a change in themselves.
      const auto va = identity_value(a.samples), vb = identity_value(b.samples);
      d.mixed_a = !va;
      d.mixed_b = !vb;
      d.p50_a = va ? *va : kNaN;
      d.p50_b = vb ? *vb : kNaN;
      d.delta_pct = kNaN;  // a percentage of a hash means nothing
      d.significant = !va || !vb || *va != *vb;
      d.change = d.significant ? Change::changed : Change::unchanged;
      return d;
    }
    d.significant = d.p50_a != d.p50_b;
    d.change = d.significant ? direction(d.p50_a, d.p50_b, d.better) : Change::unchanged;
    return d;
  }
  // Relative size of the change; a change away from a zero median counts as large.
  const bool large = d.p50_a != d.p50_b && (std::isnan(d.delta_pct) || std::fabs(d.delta_pct) >= options.threshold_pct);
  if (d.n_a >= 2 && d.n_b >= 2) {
    const auto u = stats::mann_whitney_u(a.samples, b.samples);
    d.p_value = u.p_value;
    d.test = u.method;
    d.significant = u.p_value < options.alpha;
  } else {
    d.significant = large;  // asv: single-repeat results are compared on the factor alone
  }
  if (!large) d.change = Change::unchanged;
  else if (!d.significant) d.change = Change::noise;
  else d.change = direction(d.p50_a, d.p50_b, d.better);
  return d;
}

RecordDiff diff_records(const Record& a, const Record& b, const DiffOptions& options, const std::string& label_a,
                        const std::string& label_b) {
  if (!(options.alpha > 0.0 && options.alpha < 1.0)) {
    throw RecordError("diff: alpha = " + std::to_string(options.alpha) + " is not in (0, 1)");
  }
  if (!(options.threshold_pct >= 0.0)) {
    throw RecordError("diff: threshold_pct = " + std::to_string(options.threshold_pct) + " must be >= 0");
  }
  RecordDiff out;
  out.a = side_of(a, label_a);
  out.b = side_of(b, label_b);
  out.options = options;
  std::string caveat;  // for every timed row: which side's box is not known to be quiet
  for (const auto& [side, rec] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    for (const auto& h : active_test_hooks(*rec))
      out.warnings.push_back(std::string(side) + " was made with a test hook active (" + h + ")");
    const std::string box = box_caveat(*rec);
    if (box.empty()) continue;
    caveat += (caveat.empty() ? "" : "; ") + std::string(side) + ": box " +
              (box == "not quiet-box checked" ? "not checked" : "not quiet");
    if (box == "not quiet-box checked")
      out.warnings.push_back(std::string(side) + " was not quiet-box checked (`atlas-bench run` does not check the box; " +
                             "gate runs do): timed differences may be other load; timed rows are marked");
    else
      out.warnings.push_back(std::string(side) + "'s box was NOT quiet: " + box +
                             ": its timed values may be other load, not the code; timed rows are marked");
  }
  if (label_a == label_b) out.warnings.push_back("A and B are the same record (" + label_a + ")");
  // Rows in the order a reader expects: numbers in names by value (load rate=20 before rate=200).
  const auto natural = [](const std::pair<std::string, std::string>& x, const std::pair<std::string, std::string>& y) {
    if (x.first != y.first) return natural_less(x.first, y.first);
    return natural_less(x.second, y.second);
  };
  std::set<std::pair<std::string, std::string>, decltype(natural)> keys(natural);
  for (const Record* r : {&a, &b}) {
    for (const auto& [sname, s] : r->suites) {
      for (const auto& [mname, m] : s.metrics) keys.emplace(sname, mname);
    }
  }
  auto find = [](const Record& r, const std::string& s, const std::string& m) -> const Metric* {
    const auto si = r.suites.find(s);
    if (si == r.suites.end()) return nullptr;
    const auto mi = si->second.metrics.find(m);
    return mi == si->second.metrics.end() ? nullptr : &mi->second;
  };
  for (const auto& [sname, mname] : keys) {
    const Metric* ma = find(a, sname, mname);
    const Metric* mb = find(b, sname, mname);
    if (ma && mb) out.metrics.push_back(diff_metric(sname, mname, *ma, *mb, options));
    else if (ma) out.metrics.push_back(one_sided(sname, mname, *ma, true));
    else out.metrics.push_back(one_sided(sname, mname, *mb, false));
    if (out.metrics.back().kind == MetricKind::timed) out.metrics.back().caveat = caveat;
  }
  return out;
}

}  // namespace atlas::records
