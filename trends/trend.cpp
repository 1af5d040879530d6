#include "trends/trend.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/number_format.hpp"
#include "records/stats.hpp"

namespace atlas::trends {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double median_of_medians(const Series& s, std::size_t begin, std::size_t end) {
  std::vector<double> m;
  for (std::size_t i = begin; i < end; ++i) m.push_back(s.points[i].median);
  return records::stats::median(m);
}

double pct(double before, double after) {
  if (before == 0 || std::isnan(before) || std::isnan(after)) return kNaN;
  return 100.0 * (after - before) / std::fabs(before);
}

bool worse_direction(const Series& s, double before, double after) {
  if (s.identity) return true;
  return s.better == records::Better::lower ? after > before : after < before;
}

bool same_value(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// Point indexes where a new level starts, with the permutation test's p (0 for exact metrics).
std::vector<std::pair<std::size_t, double>> step_starts(const Series& s, const ChangePointSettings& settings) {
  std::vector<std::pair<std::size_t, double>> starts;
  if (s.kind == records::MetricKind::timed && !s.identity) {
    std::vector<double> x;
    for (const auto& p : s.points) x.push_back(p.median);
    for (const auto& cp : e_divisive_means(x, settings)) starts.emplace_back(cp.index, cp.p_value);
  } else {
    for (std::size_t i = 1; i < s.points.size(); ++i)
      if (!same_value(s.points[i].median, s.points[i - 1].median)) starts.emplace_back(i, 0.0);
  }
  return starts;
}

std::vector<double> pooled(const Series& s, std::size_t begin, std::size_t end) {
  std::vector<double> out;
  for (std::size_t i = begin; i < end; ++i) out.insert(out.end(), s.points[i].samples.begin(), s.points[i].samples.end());
  return out;
}

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

// The BASELINE's last reviewed move of a metric: its ratchet, accept or init entry.
const gates::HistoryEntry* last_move(const gates::BaselineMetric& m) {
  for (auto it = m.history.rbegin(); it != m.history.rend(); ++it)
    if (it->action == gates::HistoryAction::ratchet || it->action == gates::HistoryAction::accept ||
        it->action == gates::HistoryAction::init)
      return &*it;
  return nullptr;
}

// Whether the BASELINE's identity says its metrics of `suite` were measured like the line's.
bool describes_line(const gates::Baseline& b, const Line& line, const std::string& suite) {
  if (!b.identity.is_object() || !b.identity.contains("suites") || !b.identity["suites"].is_object()) return true;
  const auto& suites = b.identity["suites"];
  const auto it = suites.find(suite);
  const auto mine = line.suite_configs.find(suite);
  if (it == suites.end() || mine == line.suite_configs.end()) return true;
  return *it == mine->second;
}

}  // namespace

std::vector<Step> find_steps(const Series& s, const ChangePointSettings& settings) {
  std::vector<Step> steps;
  const auto starts = step_starts(s, settings);
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const std::size_t lo = k == 0 ? 0 : starts[k - 1].first;
    const std::size_t at = starts[k].first;
    const std::size_t hi = k + 1 < starts.size() ? starts[k + 1].first : s.points.size();
    Step st;
    st.from = s.points[at - 1].commit;
    st.to = s.points[at].commit;
    const bool exact = s.kind != records::MetricKind::timed || s.identity;
    st.before = exact ? s.points[at - 1].median : median_of_medians(s, lo, at);
    st.after = exact ? s.points[at].median : median_of_medians(s, at, hi);
    st.delta_pct = s.identity ? kNaN : pct(st.before, st.after);
    st.worse = worse_direction(s, st.before, st.after);
    st.confidence = 1 - starts[k].second;
    steps.push_back(st);
  }
  return steps;
}

std::vector<LineTrend> analyse(const History& h, const HistoryOptions& o, const TrendSettings& settings) {
  std::vector<LineTrend> out;
  const auto window = static_cast<std::size_t>(std::max(1, settings.level_window));
  for (std::size_t li = 0; li < h.lines.size(); ++li) {
    const Line& line = h.lines[li];
    const gates::GateConfig cfg = o.config_for ? o.config_for(line.gate_or_suite) : gates::GateConfig{};
    const gates::CompareSettings compare = gates::compare_settings(cfg);
    const auto baseline = find_baseline(o.baselines_dir, line.machine_class, line.gate_or_suite);
    LineTrend lt;
    lt.line = li;
    for (const auto& [key, s] : line.series) {
      SeriesTrend t;
      t.key = key;
      if (s.points.empty()) continue;
      t.steps = find_steps(s, settings.change_points);
      const std::size_t n = s.points.size();
      const std::size_t first_moved = n > static_cast<std::size_t>(settings.moved_window) ? n - settings.moved_window : 0;
      t.moved_pct = s.identity ? kNaN : pct(s.points[first_moved].median, s.points[n - 1].median);

      const gates::BaselineMetric* stored = nullptr;
      if (baseline) {
        const auto it = baseline->metrics.find(key);
        if (it != baseline->metrics.end()) {
          t.baseline = it->second.value;
          if (describes_line(*baseline, line, gates::split_metric_key(key).first)) stored = &it->second;
        }
      }
      if (s.identity) {
        t.not_judged = "an identity (hash): the gate fails any change of it at once";
        lt.series.push_back(std::move(t));
        continue;
      }
      // The newest level: after the last step.
      std::size_t level_begin = 0;
      for (const auto& st : t.steps)
        for (std::size_t i = 0; i < n; ++i)
          if (s.points[i].commit == st.to) level_begin = std::max(level_begin, i);
      Drift d;
      gates::BaselineMetric reference;
      if (stored != nullptr) {
        reference = *stored;
        const gates::HistoryEntry* move = last_move(*stored);
        d.reference = "BASELINE " + format_number(stored->value) + " " + stored->unit;
        if (move != nullptr && !move->commit.empty()) {
          d.reference += " (" + std::string(gates::to_string(move->action)) + " at " + short_sha(move->commit) + ")";
          const auto c = std::find_if(line.commits.begin(), line.commits.end(), [&](const Commit& x) {
            return x.sha.rfind(move->commit, 0) == 0 || move->commit.rfind(x.sha, 0) == 0;
          });
          if (c != line.commits.end()) {
            const auto ci = static_cast<std::size_t>(c - line.commits.begin());
            d.since = c->sha;
            std::size_t first = n;
            for (std::size_t i = 0; i < n; ++i)
              if (s.points[i].commit >= ci) {
                first = i;
                break;
              }
            if (first == n) {
              t.not_judged = "no commit of this line since the BASELINE's last move (" + short_sha(move->commit) + ")";
              lt.series.push_back(std::move(t));
              continue;
            }
            level_begin = std::max(level_begin, first);
          }
        }
      } else {
        // The history's start: its oldest commits, before its first step.
        const std::size_t first_step = t.steps.empty() ? n : [&] {
          for (std::size_t i = 0; i < n; ++i)
            if (s.points[i].commit == t.steps.front().to) return i;
          return n;
        }();
        const std::size_t ref_end = std::min(window, first_step);
        if (n < ref_end + 1 || std::max(level_begin, n > window ? n - window : 0) < ref_end) {
          t.not_judged = "too few commits (" + std::to_string(n) + ") for a start and a level now of up to " +
                         std::to_string(window) + " commits each";
          lt.series.push_back(std::move(t));
          continue;
        }
        reference.samples = pooled(s, 0, ref_end);
        reference.value = records::stats::median(reference.samples);
        reference.unit = s.unit;
        reference.better = s.better;
        reference.kind = s.kind;
        reference.tolerance = gates::default_tolerance(cfg, s.kind, key);
        d.reference = "the history's start (" + std::to_string(ref_end) + " commits, median " +
                      format_number(reference.value) + " " + s.unit + ")";
        if (t.baseline) d.reference += "; the BASELINE was measured on another CPU or config";
      }
      const std::size_t level_from = std::max(level_begin, n > window ? n - window : 0);
      records::Metric now;
      now.unit = s.unit;
      now.better = s.better;
      now.kind = s.kind;
      now.samples = pooled(s, level_from, n);
      d.level_commits = n - level_from;
      d.verdict = gates::judge_metric(key, &reference, &now, compare);
      t.drift = d;
      lt.series.push_back(std::move(t));
    }
    out.push_back(std::move(lt));
  }
  return out;
}

}  // namespace atlas::trends
