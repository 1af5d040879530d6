#include "gates/diff_judge.hpp"

#include "gates/baseline.hpp"
#include "gates/compare.hpp"

namespace atlas::gates {

records::MetricJudge diff_judge(const GateConfig& cfg, const DiffJudgeOverrides& overrides) {
  CompareSettings settings = compare_settings(cfg);
  if (overrides.alpha) settings.alpha = *overrides.alpha;
  return [cfg, settings, overrides](const std::string& suite, const std::string& metric, const records::Metric& a,
                                    const records::Metric& b) -> std::optional<records::MetricJudgement> {
    const std::string key = metric_key(suite, metric);
    BaselineMetric base;
    base.value = candidate_value(a);
    base.unit = a.unit;
    base.better = a.better;
    base.kind = a.kind;
    base.samples = a.samples;
    base.tolerance = default_tolerance(cfg, a.kind, key);
    if (overrides.timed_relative && a.kind == records::MetricKind::timed) base.tolerance.relative = *overrides.timed_relative;
    const Verdict v = judge_metric(key, &base, &b, settings);
    records::MetricJudgement j;
    j.rule = v.rule;
    j.why = v.why;
    j.p_value = v.p_value;
    switch (v.status) {
      case VerdictStatus::regression: j.change = records::Change::regressed; break;
      case VerdictStatus::improved: j.change = records::Change::improved; break;
      case VerdictStatus::same: j.change = records::Change::unchanged; break;
      case VerdictStatus::needs_more_samples: j.change = records::Change::noise; break;
      case VerdictStatus::incomparable: j.change = records::Change::incomparable; break;
      case VerdictStatus::new_metric:
      case VerdictStatus::missing: return std::nullopt;  // not reached: both sides have samples
    }
    return j;
  };
}

}  // namespace atlas::gates
