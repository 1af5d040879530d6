#include "gates/interleaved.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include "common/number_format.hpp"
#include "records/stats.hpp"

namespace atlas::gates {
namespace {

std::string pct(double x) { return format_fraction_percent(x, false); }

double steady_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double wait_share(const SideRun& r) {
  const double rq = r.wall_s > 0 ? r.run_queue_wait_s / r.wall_s : 0;
  return std::max(rq, r.steal_share);
}

struct Series {
  std::vector<double> base, head;
  std::string unit;
  records::Better better = records::Better::lower;
  std::string missing;  ///< why the metric could not be judged
};

}  // namespace

const char* to_string(Side s) { return s == Side::base ? "base" : "head"; }

const char* to_string(TimedStatus s) {
  switch (s) {
    case TimedStatus::regression: return "regression";
    case TimedStatus::pass: return "pass";
    case TimedStatus::undecided: return "undecided";
    case TimedStatus::noisy: return "not gated";
    case TimedStatus::load: return "inconclusive";
    case TimedStatus::missing: return "missing";
  }
  return "?";
}

TimedVerdict classify(const TimedMetric& m, const records::PairedVerdict& v, int disturbed, int rounds_run,
                      const InterleavedSettings& s) {
  TimedVerdict t;
  t.metric = m;
  t.paired = v;
  const bool too_much_load = rounds_run > 0 && disturbed > s.max_disturbed_share * rounds_run;
  const std::string load_text = std::to_string(disturbed) + " of " + std::to_string(rounds_run) +
                                " rounds were disturbed by load (a side waited for a CPU more than " + pct(s.max_wait_share) +
                                " of its run, or the sides' waits differed by more than " + pct(s.max_wait_gap) + ")";
  if (v.status == records::PairedStatus::regression) {
    // Judged on the rounds both sides were given their CPU alike: disturbed rounds are out of
    // the data, so however many there were, they cannot have made this regression.
    t.status = TimedStatus::regression;
    t.why = v.why;
    if (disturbed > 0) t.why += " (" + std::to_string(disturbed) + " disturbed rounds not judged)";
  } else if (v.rules_out_regression) {
    t.status = TimedStatus::pass;
    // The gate asks one question (is head worse by the tolerance?), so its reason must read as
    // its verdict: judge_paired words the two-sided answer (`ab`'s), which may be "undecided"
    // (the interval also reaches below -tolerance) when a slowdown of the tolerance is excluded.
    std::string rest = v.why;
    for (const char* word : {"undecided: ", "same: ", "better: "})
      if (rest.rfind(word, 0) == 0) rest = rest.substr(std::char_traits<char>::length(word));
    t.why = "pass: a slowdown of the tolerance is excluded (the interval's upper end " + pct(v.ci_hi) + " < " +
            pct(m.tolerance) + "); " + rest;
  } else if (too_much_load) {
    t.status = TimedStatus::load;
    t.why = "inconclusive: load: " + load_text + ", so only " + std::to_string(v.rounds) + " rounds were judged within the time budget; " + v.why;
  } else if (std::isfinite(v.mde) && v.mde > m.tolerance) {
    t.status = TimedStatus::noisy;
    t.why = "not gated: noise " + pct(v.mde) + " > tolerance " + pct(m.tolerance) + " (minimum detectable effect at " +
            std::to_string(v.rounds) + " rounds from the A/A spread " + pct(v.aa_noise) + " of the base runs); " + v.why;
  } else {
    t.status = TimedStatus::undecided;
    t.why = v.why;
  }
  return t;
}

Overall overall_of(const std::vector<TimedVerdict>& verdicts) {
  bool inconclusive = false;
  for (const auto& v : verdicts) {
    if (v.status == TimedStatus::regression) return Overall::regression;
    if (v.status != TimedStatus::pass) inconclusive = true;
  }
  return inconclusive ? Overall::inconclusive : Overall::pass;
}

InterleavedOutcome run_interleaved(const InterleavedSettings& s, const RunSide& run_side,
                                   const records::StoppingRule& stop, const std::function<double()>& now_s) {
  const auto now = now_s ? now_s : std::function<double()>(steady_now_s);
  InterleavedOutcome out;
  out.stopping_rule = stop.describe();
  std::vector<Series> series(s.metrics.size());
  const double t0 = now();
  int judged = 0, looks_made = 0;
  // A metric decided at a look keeps that verdict (the group-sequential design's premise: its
  // error bound counts each metric's first decision); the rest are judged again at each look.
  std::vector<std::optional<records::PairedVerdict>> frozen(s.metrics.size());
  std::vector<records::PairedVerdict> latest(s.metrics.size());
  auto judge_all = [&](double confidence) {
    records::PairedSettings ps = s.paired;
    ps.confidence = confidence;
    for (std::size_t i = 0; i < s.metrics.size(); ++i) {
      if (frozen[i]) {
        latest[i] = *frozen[i];
        continue;
      }
      if (!series[i].missing.empty()) {
        records::PairedVerdict v;  // undecided, nothing to judge
        v.tolerance = s.metrics[i].tolerance;
        v.rules_out_regression = true;  // a missing metric cannot be decided by more rounds: don't wait on it
        latest[i] = v;
        continue;
      }
      latest[i] = records::judge_paired(series[i].base, series[i].head, series[i].better, s.metrics[i].tolerance, ps);
      if (latest[i].status == records::PairedStatus::regression || latest[i].rules_out_regression) frozen[i] = latest[i];
    }
    ++looks_made;
  };
  auto state = [&](int rounds_run) {
    records::RoundState st;
    st.rounds = judged;
    st.rounds_run = rounds_run;
    st.elapsed_s = now() - t0;
    st.looks_made = looks_made;
    return st;
  };
  bool looked_last = false;
  for (int round = 0;; ++round) {
    RoundLog log;
    log.round = round;
    log.head_first = round % 2 == 1;
    SideRun runs[2];  // [0] base, [1] head
    const Side order[2] = {log.head_first ? Side::head : Side::base, log.head_first ? Side::base : Side::head};
    for (Side side : order) {
      SideRun r = run_side(side, round);
      if (r.failure.empty() && !r.record.valid)
        r.failure = "the run is invalid: " + r.record.invalid_reason;
      if (!r.failure.empty()) {
        out.failure = std::string(to_string(side)) + " side, round " + std::to_string(round + 1) + ": " + r.failure;
        break;
      }
      runs[side == Side::base ? 0 : 1] = std::move(r);
    }
    if (!out.failure.empty()) {
      log.why = out.failure;
      out.rounds.push_back(log);
      break;
    }
    log.base_wall_s = runs[0].wall_s;
    log.head_wall_s = runs[1].wall_s;
    log.base_wait_share = wait_share(runs[0]);
    log.head_wait_share = wait_share(runs[1]);
    log.disturbed = std::max(log.base_wait_share, log.head_wait_share) > s.max_wait_share ||
                    std::abs(log.base_wait_share - log.head_wait_share) > s.max_wait_gap;
    if (log.disturbed) {
      ++out.disturbed_rounds;
      log.why = "base waited " + pct(log.base_wait_share) + ", head " + pct(log.head_wait_share) + " of its run";
    }
    for (std::size_t i = 0; i < s.metrics.size(); ++i) {
      Series& se = series[i];
      if (!se.missing.empty()) continue;
      const records::Metric* mb = find_metric(runs[0].record, s.metrics[i].key);
      const records::Metric* mh = find_metric(runs[1].record, s.metrics[i].key);
      if (mb == nullptr || mb->samples.empty() || mh == nullptr || mh->samples.empty()) {
        if (log.disturbed) continue;
        se.missing = std::string("no samples of ") + s.metrics[i].key + " from the " +
                     (mb == nullptr || mb->samples.empty() ? "base" : "head") + " side";
        continue;
      }
      const double b = records::stats::median(mb->samples), h = records::stats::median(mh->samples);
      log.values[s.metrics[i].key] = {b, h};  // kept for disturbed rounds too: the record shows what was dropped
      if (log.disturbed) continue;
      se.unit = mb->unit;
      se.better = mb->better;
      se.base.push_back(b);
      se.head.push_back(h);
    }
    if (!log.disturbed) ++judged;
    out.rounds.push_back(log);
    looked_last = false;
    if ((round + 1) % 2 != 0) continue;  // looks only after each AB BA pair
    records::RoundState st = state(round + 1);
    const auto look = stop.look(st, s.paired.confidence);
    if (!look) continue;
    judge_all(look->confidence);
    looked_last = true;
    out.look_log.push_back({judged, look->confidence});
    if (look->final) {
      out.stop_reason = look->reason;
      break;
    }
    st.verdicts = latest;
    if (auto why = stop.should_stop(st)) {
      out.stop_reason = *why;
      break;
    }
  }
  out.elapsed_s = now() - t0;
  if (!looked_last) {
    // The rounds ended between looks (a side failed): one closing look at what is left.
    const double c = stop.closing_confidence(state(static_cast<int>(out.rounds.size())), s.paired.confidence);
    judge_all(c);
    out.look_log.push_back({judged, c});
  }
  const int rounds_run = static_cast<int>(out.rounds.size());
  for (std::size_t i = 0; i < s.metrics.size(); ++i) {
    TimedVerdict t;
    if (!series[i].missing.empty()) {
      t.metric = s.metrics[i];
      t.status = TimedStatus::missing;
      t.why = series[i].missing;
    } else {
      t = classify(s.metrics[i], latest[i], out.disturbed_rounds, rounds_run, s);
      t.unit = series[i].unit;
      t.better = series[i].better;
      // Medians of the rounds the verdict judged (a verdict decided at an earlier look keeps it).
      const auto n = std::min(series[i].base.size(), static_cast<std::size_t>(std::max(latest[i].rounds, 0)));
      if (n > 0) {
        t.base_median = records::stats::median(std::vector<double>(series[i].base.begin(), series[i].base.begin() + n));
        t.head_median = records::stats::median(std::vector<double>(series[i].head.begin(), series[i].head.begin() + n));
      }
    }
    if (!out.failure.empty() && t.status != TimedStatus::regression) {
      t.status = TimedStatus::undecided;
      t.why = "stopped early: " + out.failure + "; " + t.why;
    }
    out.verdicts.push_back(std::move(t));
  }
  out.overall = overall_of(out.verdicts);
  if (!out.failure.empty() && out.overall == Overall::pass) out.overall = Overall::inconclusive;
  return out;
}

nlohmann::json to_json(const InterleavedOutcome& o) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& v : o.verdicts) {
    auto opt = [](const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(nullptr); };
    verdicts.push_back({{"metric", v.metric.key},
                        {"tolerance", v.metric.tolerance},
                        {"unit", v.unit},
                        {"better", records::to_string(v.better)},
                        {"verdict", to_string(v.status)},
                        {"base_median", opt(v.base_median)},
                        {"head_median", opt(v.head_median)},
                        {"paired", records::to_json(v.paired)},
                        {"why", v.why}});
  }
  nlohmann::json rounds = nlohmann::json::array();
  for (const auto& r : o.rounds) {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [k, bh] : r.values) values[k] = {{"base", bh.first}, {"head", bh.second}};
    rounds.push_back({{"round", r.round},
                      {"values", values},
                      {"order", r.head_first ? "head,base" : "base,head"},
                      {"base_wall_s", r.base_wall_s},
                      {"head_wall_s", r.head_wall_s},
                      {"base_wait_share", r.base_wait_share},
                      {"head_wait_share", r.head_wait_share},
                      {"disturbed", r.disturbed},
                      {"why", r.why}});
  }
  nlohmann::json looks = nlohmann::json::array();
  for (const auto& l : o.look_log) looks.push_back({{"rounds", l.rounds}, {"confidence", l.confidence}});
  return {{"overall", to_string(o.overall)}, {"verdicts", verdicts},     {"rounds", rounds},
          {"disturbed_rounds", o.disturbed_rounds}, {"stop_reason", o.stop_reason}, {"elapsed_s", o.elapsed_s},
          {"failure", o.failure},       {"stopping_rule", o.stopping_rule}, {"looks", looks}};
}

}  // namespace atlas::gates
