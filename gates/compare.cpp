#include "gates/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "common/number_format.hpp"
#include "gates/config.hpp"
#include "records/stats.hpp"

namespace atlas::gates {
namespace {

// Values in reasons read as in the tables beside them (atlas::format_number).
std::string fmt(double v) { return format_number(v); }

// Two values that differ must not read alike ("28.53 is worse than 28.53"): format_number, with
// as many more significant digits as it takes to tell them apart.
std::pair<std::string, std::string> fmt_distinct(double a, double b) {
  std::pair<std::string, std::string> s{fmt(a), fmt(b)};
  for (int digits = 6; s.first == s.second && a != b && digits <= 17; ++digits) {
    char x[64], y[64];
    std::snprintf(x, sizeof x, "%.*g", digits, a);
    std::snprintf(y, sizeof y, "%.*g", digits, b);
    s = {x, y};
  }
  return s;
}

// How much worse the candidate is, in the metric's unit (positive = worse).
double worsening(records::Better better, double baseline, double candidate) {
  return better == records::Better::lower ? candidate - baseline : baseline - candidate;
}

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

/// A hash: every candidate sample must equal the baseline's (a median would pass 3 changed runs
/// of 7).
Verdict judge_identity(Verdict v, const BaselineMetric& b, const records::Metric& c) {
  v.rule = "identity";
  const auto hex = [&](double x) { return records::identity_hex(x, b.unit); };
  const auto differing = std::count_if(c.samples.begin(), c.samples.end(), [&](double x) { return x != b.value; });
  if (differing == 0) {
    v.status = VerdictStatus::same;
    v.why = "output fingerprint unchanged";
    return v;
  }
  const double first = *std::find_if(c.samples.begin(), c.samples.end(), [&](double x) { return x != b.value; });
  v.status = VerdictStatus::regression;
  v.candidate_value = first;  // a value that occurred: the median of two hashes is neither
  v.why = "output fingerprint changed in " + std::to_string(differing) + " of " + std::to_string(c.samples.size()) +
          " runs (" + hex(b.value) + " -> " + hex(first) + "): generated tokens differ; `baseline accept` if intended";
  return v;
}

Verdict judge_exact(Verdict v, const BaselineMetric& b, double cand) {
  // Exact unless the baseline gives a tolerance (callgrind instruction counts: a tiny relative
  // one, docs/gates.md): only a change beyond it is a regression or an improvement.
  const double tolerance = std::max(b.tolerance.relative * std::fabs(b.value), b.tolerance.absolute);
  v.rule = tolerance > 0 ? "exact-tolerance" : "exact";
  if (tolerance > 0) v.margin = tolerance;
  const double worse = worsening(b.better, b.value, cand);
  const auto [cand_text, base_text] = fmt_distinct(cand, b.value);
  const std::string within = tolerance > 0 ? " beyond the tolerance " + fmt(tolerance) + " " + b.unit : "";
  if (worse > tolerance) {
    v.status = VerdictStatus::regression;
    v.why = std::string(records::to_string(b.kind)) + " metric is gated " + (tolerance > 0 ? "nearly " : "") +
            "exactly: " + cand_text + " is worse than " + base_text + within;
  } else if (-worse > tolerance) {
    v.status = VerdictStatus::improved;
    v.why = "better than the baseline (" + cand_text + " vs " + base_text + ")" + within +
            "; `baseline ratchet` tightens it";
  } else {
    v.status = VerdictStatus::same;
    // The raw change (candidate − baseline), signed as the delta column beside it.
    const double change = cand - b.value;
    v.why = worse == 0 ? "equal to the baseline"
                       : "changed by " + std::string(change > 0 ? "+" : "") + fmt(change) + " " + b.unit +
                             ", within the tolerance " + fmt(tolerance);
  }
  return v;
}

/// A counted metric whose expected value is exact: any change beyond the tolerance, either way,
/// is a regression (a direction would call a lost CUDA graph "improved").
Verdict judge_equal(Verdict v, const BaselineMetric& b, double cand) {
  const double tolerance = std::max(b.tolerance.relative * std::fabs(b.value), b.tolerance.absolute);
  v.rule = "equality";
  if (tolerance > 0) v.margin = tolerance;
  const auto [cand_text, base_text] = fmt_distinct(cand, b.value);
  if (std::fabs(cand - b.value) > tolerance) {
    v.status = VerdictStatus::regression;
    v.why = "expected exactly " + base_text + (tolerance > 0 ? " (tolerance " + fmt(tolerance) + ")" : "") + ", got " +
            cand_text + ": judged on equality, a change either way is a regression (`baseline accept` if intended)";
  } else {
    v.status = VerdictStatus::same;
    v.why = cand == b.value ? "equal to the baseline" : "within the tolerance " + fmt(tolerance) + " of the exact value";
  }
  return v;
}

Verdict judge_timed(Verdict v, const BaselineMetric& b, const records::Metric& c, const CompareSettings& s) {
  const double cand = *v.candidate_value;
  if (static_cast<int>(c.samples.size()) < s.min_samples) {
    v.status = VerdictStatus::needs_more_samples;
    v.rule = "min-samples";
    v.why = std::to_string(c.samples.size()) + " samples, at least " + std::to_string(s.min_samples) + " needed";
    return v;
  }
  std::vector<double> cs = c.samples, bs = b.samples;
  std::sort(cs.begin(), cs.end());
  std::sort(bs.begin(), bs.end());
  if (cs == bs) {
    v.status = VerdictStatus::same;
    v.rule = "identical-samples";
    v.why = "candidate samples are identical to the baseline samples";
    return v;
  }
  const double noise = std::max(median_ci_half_width(b.samples, s), median_ci_half_width(c.samples, s));
  const double tolerance = std::max(b.tolerance.relative * std::fabs(b.value), b.tolerance.absolute);
  const double margin = std::max(tolerance, noise);
  v.noise = noise;
  v.margin = margin;
  const double worse = worsening(b.better, b.value, cand);
  const std::string margin_text = "margin " + fmt(margin) + " " + b.unit + " = max(tolerance " + fmt(tolerance) +
                                  ", noise " + fmt(noise) + ")";
  if (b.samples.size() < 2) {
    v.rule = "margin-only";
    const std::string no_test = "; baseline has " + std::to_string(b.samples.size()) + " samples, so no U test";
    if (worse > margin) {
      v.status = VerdictStatus::regression;
      v.why = "worse by " + fmt(worse) + " " + b.unit + ", beyond " + margin_text + no_test;
    } else if (-worse > margin) {
      v.status = VerdictStatus::improved;
      v.why = "better by " + fmt(-worse) + " " + b.unit + ", beyond " + margin_text + no_test;
    } else {
      v.status = VerdictStatus::same;
      v.why = "within " + margin_text + no_test;
    }
    return v;
  }
  v.rule = "mann-whitney-u";
  const auto mw = records::stats::mann_whitney_u(c.samples, b.samples);
  v.p_value = mw.p_value;
  // u1 counts (candidate, baseline) pairs where the candidate is larger: above n1*n2/2 the
  // candidate ranks higher. The significant side must agree with the median's direction.
  const double half = 0.5 * static_cast<double>(c.samples.size()) * static_cast<double>(b.samples.size());
  const bool ranks_higher = mw.u1 > half;
  const bool ranks_lower = mw.u1 < half;
  const bool ranks_worse = b.better == records::Better::lower ? ranks_higher : ranks_lower;
  const bool ranks_better = b.better == records::Better::lower ? ranks_lower : ranks_higher;
  const bool significant = mw.p_value < s.alpha;
  const std::string p_text = "p=" + fmt(mw.p_value) + (significant ? " < " : " >= ") + "alpha " + fmt(s.alpha);
  if (worse > margin) {
    if (significant && ranks_worse) {
      v.status = VerdictStatus::regression;
      v.why = "median worse by " + fmt(worse) + " " + b.unit + ", beyond " + margin_text + ", and " + p_text;
    } else {
      v.status = VerdictStatus::needs_more_samples;
      v.why = "median worse by " + fmt(worse) + " " + b.unit + ", beyond " + margin_text + ", but " + p_text +
              (significant ? " with ranks on the better side" : "") + ": not yet significant";
    }
  } else if (-worse > margin) {
    if (significant && ranks_better) {
      v.status = VerdictStatus::improved;
      v.why = "median better by " + fmt(-worse) + " " + b.unit + ", beyond " + margin_text + ", and " + p_text +
              "; `baseline ratchet` tightens it";
    } else {
      v.status = VerdictStatus::same;
      v.why = "median better by " + fmt(-worse) + " " + b.unit + " but not significant (" + p_text + ")";
    }
  } else {
    v.status = VerdictStatus::same;
    v.why = "median change " + fmt(-worse) + " " + b.unit + " within " + margin_text;
  }
  return v;
}

}  // namespace

CompareSettings compare_settings(const GateConfig& c) {
  return {c.min_samples, c.alpha, c.noise_confidence, c.noise_resamples, c.equality_metrics};
}

const char* to_string(VerdictStatus s) {
  switch (s) {
    case VerdictStatus::same: return "same";
    case VerdictStatus::improved: return "improved";
    case VerdictStatus::regression: return "regression";
    case VerdictStatus::needs_more_samples: return "needs-more-samples";
    case VerdictStatus::new_metric: return "new";
    case VerdictStatus::missing: return "missing";
    case VerdictStatus::incomparable: return "incomparable";
  }
  return "?";
}

const char* to_string(Overall o) {
  switch (o) {
    case Overall::pass: return "pass";
    case Overall::regression: return "regression";
    case Overall::inconclusive: return "inconclusive";
  }
  return "?";
}

ExitCode exit_code(Overall o) {
  switch (o) {
    case Overall::pass: return ExitCode::pass;
    case Overall::regression: return ExitCode::regression;
    case Overall::inconclusive: return ExitCode::inconclusive;
  }
  return ExitCode::input_error;
}

double median_ci_half_width(const std::vector<double>& samples, const CompareSettings& s) {
  if (samples.size() < 2) return 0;
  const auto ci = records::stats::bootstrap_median_ci(samples, s.noise_confidence, s.noise_resamples, 42);
  return 0.5 * (ci.hi - ci.lo);
}

double candidate_value(const records::Metric& m) { return records::stats::median(m.samples); }

const records::Metric* find_metric(const records::Record& r, const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return nullptr;
  const auto suite = r.suites.find(key.substr(0, slash));
  if (suite == r.suites.end()) return nullptr;
  const auto m = suite->second.metrics.find(key.substr(slash + 1));
  return m == suite->second.metrics.end() ? nullptr : &m->second;
}

Verdict judge_metric(const std::string& key, const BaselineMetric* b, const records::Metric* c, const CompareSettings& s) {
  Verdict v;
  v.key = key;
  if (b) {
    v.unit = b->unit;
    v.better = b->better;
    v.kind = b->kind;
    v.baseline_value = b->value;
    v.baseline_n = static_cast<int>(b->samples.size());
  }
  if (c) {
    if (!b) {
      v.unit = c->unit;
      v.better = c->better;
      v.kind = c->kind;
    }
    v.candidate_n = static_cast<int>(c->samples.size());
    if (!c->samples.empty()) v.candidate_value = candidate_value(*c);
  }
  v.rule = "none";
  if (!b) {
    v.status = VerdictStatus::new_metric;
    v.why = "not in the baseline: reported, not gated (`baseline ratchet` adds it)";
    return v;
  }
  if (!c || c->samples.empty()) {
    v.status = VerdictStatus::missing;
    v.why = c ? "the record has no samples for this metric" : "in the baseline but not in the record: a gate was lost";
    return v;
  }
  if (c->unit != b->unit || c->kind != b->kind || c->better != b->better) {
    v.status = VerdictStatus::incomparable;
    v.why = std::string("record says ") + c->unit + "/" + records::to_string(c->kind) + "/" +
            records::to_string(c->better) + ", baseline says " + b->unit + "/" + records::to_string(b->kind) + "/" +
            records::to_string(b->better) + ": update the baseline with `baseline accept`";
    return v;
  }
  // A percentage of a hash means nothing.
  if (b->value != 0 && !records::is_identity_unit(b->unit))
    v.delta_pct = 100.0 * (*v.candidate_value - b->value) / std::fabs(b->value);
  if (b->kind == records::MetricKind::timed) return judge_timed(std::move(v), *b, *c, s);
  if (records::is_identity_unit(b->unit)) return judge_identity(std::move(v), *b, *c);
  const double cand = *v.candidate_value;
  if (b->kind == records::MetricKind::counted && matches_segment(key, s.equality_segments))
    return judge_equal(std::move(v), *b, cand);
  return judge_exact(std::move(v), *b, cand);
}

bool matches_segment(const std::string& key, const std::vector<std::string>& segments) {
  std::size_t start = 0;
  while (start <= key.size()) {
    const auto end = std::min(key.find('/', start), key.size());
    const std::string seg = key.substr(start, end - start);
    if (std::find(segments.begin(), segments.end(), seg) != segments.end()) return true;
    start = end + 1;
  }
  return false;
}

std::string failing_metrics(const std::vector<Verdict>& verdicts, std::size_t max_named) {
  const VerdictStatus order[] = {VerdictStatus::regression, VerdictStatus::missing, VerdictStatus::incomparable,
                                 VerdictStatus::needs_more_samples};
  std::string out;
  for (const VerdictStatus st : order) {
    std::vector<const Verdict*> hit;
    for (const auto& v : verdicts)
      if (v.status == st) hit.push_back(&v);
    if (hit.empty()) continue;
    out += (out.empty() ? "" : "; ") + std::string(to_string(st)) + ": ";
    for (std::size_t i = 0; i < hit.size() && i < max_named; ++i) {
      out += (i ? ", " : "") + hit[i]->key;
      if (hit[i]->delta_pct) out += " (" + format_percent(*hit[i]->delta_pct, true) + ")";
    }
    if (hit.size() > max_named) out += " and " + std::to_string(hit.size() - max_named) + " more";
  }
  return out;
}

Comparison compare(const Baseline& baseline, const records::Record& candidate, const CompareSettings& s) {
  std::set<std::string> keys;
  for (const auto& [k, m] : baseline.metrics) keys.insert(k);
  for (const auto& [suite_name, suite] : candidate.suites) {
    for (const auto& [metric_name, m] : suite.metrics) keys.insert(metric_key(suite_name, metric_name));
  }
  Comparison out;
  for (const auto& key : keys) {
    const auto it = baseline.metrics.find(key);
    out.verdicts.push_back(judge_metric(key, it == baseline.metrics.end() ? nullptr : &it->second,
                                        find_metric(candidate, key), s));
  }
  out.overall = overall_of(out.verdicts);
  return out;
}

Overall overall_of(const std::vector<Verdict>& verdicts) {
  bool inconclusive = false;
  for (const auto& v : verdicts) {
    switch (v.status) {
      case VerdictStatus::regression:
      case VerdictStatus::missing:
      case VerdictStatus::incomparable: return Overall::regression;
      case VerdictStatus::needs_more_samples: inconclusive = true; break;
      default: break;
    }
  }
  return inconclusive ? Overall::inconclusive : Overall::pass;
}

nlohmann::json to_json(const Verdict& v) {
  return {{"metric", v.key},
          {"unit", v.unit},
          {"better", records::to_string(v.better)},
          {"kind", records::to_string(v.kind)},
          {"verdict", to_string(v.status)},
          {"rule", v.rule},
          {"baseline", opt(v.baseline_value)},
          {"candidate", opt(v.candidate_value)},
          {"delta_pct", opt(v.delta_pct)},
          {"margin", opt(v.margin)},
          {"noise", opt(v.noise)},
          {"p_value", opt(v.p_value)},
          {"baseline_n", v.baseline_n},
          {"candidate_n", v.candidate_n},
          {"why", v.why}};
}

nlohmann::json to_json(const Comparison& c) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& v : c.verdicts) verdicts.push_back(to_json(v));
  return {{"overall", to_string(c.overall)}, {"verdicts", verdicts}};
}

}  // namespace atlas::gates
