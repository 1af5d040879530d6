#include "gates/round_resample.hpp"

#include <random>

#include "gates/error.hpp"
#include "records/stopping_rule.hpp"

namespace atlas::gates {

std::vector<RecordedRound> recorded_rounds(const nlohmann::json& record, const std::string& metric, const std::string& source) {
  const nlohmann::json* rounds = nullptr;
  if (record.contains("verdicts") && record["verdicts"].is_object() && record["verdicts"].contains("timed")) {
    const auto& t = record["verdicts"]["timed"];
    if (t.is_object() && t.contains("outcome") && t["outcome"].is_object() && t["outcome"].contains("rounds"))
      rounds = &t["outcome"]["rounds"];
  }
  if (rounds == nullptr || !rounds->is_array()) throw GateError(source + ": no verdicts.timed.outcome.rounds (not a timed gate record)");
  std::vector<RecordedRound> out;
  for (const auto& r : *rounds) {
    if (!r.is_object() || !r.contains("values") || !r["values"].contains(metric)) continue;
    const auto& v = r["values"][metric];
    RecordedRound x;
    x.base = v.value("base", 0.0);
    x.head = v.value("head", 0.0);
    x.base_wall_s = r.value("base_wall_s", 0.0);
    x.head_wall_s = r.value("head_wall_s", 0.0);
    x.base_wait_share = r.value("base_wait_share", 0.0);
    x.head_wait_share = r.value("head_wait_share", 0.0);
    if (x.base > 0 && x.head > 0) out.push_back(x);
  }
  return out;
}

ResampleTally resample_gate(const std::vector<RecordedRound>& pool, const TimedJudgementConfig& cfg, const std::string& metric,
                            double planted, int runs, std::uint64_t seed) {
  if (pool.empty()) throw GateError("resample: no recorded rounds of " + metric);
  InterleavedSettings s = interleaved_settings(cfg);
  std::erase_if(s.metrics, [&](const TimedMetric& m) { return m.key != metric; });
  if (s.metrics.empty()) throw GateError("resample: " + metric + " is not a timed metric of the gate config");
  const records::GroupSequential stop = stopping_rule(cfg);
  const auto slash = metric.find('/');
  const std::string suite = metric.substr(0, slash), name = metric.substr(slash + 1);
  ResampleTally t;
  t.runs = runs;
  for (int i = 0; i < runs; ++i) {
    std::mt19937_64 rng(seed + static_cast<std::uint64_t>(i));
    std::uniform_int_distribution<std::size_t> pick(0, pool.size() - 1);
    double clock = 0;
    int drawn_for = -1;
    RecordedRound cur;
    const RunSide side = [&](Side sd, int round) {
      if (round != drawn_for) {  // one drawn round per round: its two sides stay paired
        cur = pool[pick(rng)];
        drawn_for = round;
      }
      SideRun r;
      const bool base = sd == Side::base;
      const double v = base ? cur.base : cur.head * (1 + planted);
      r.record.valid = true;
      r.record.suites[suite].name = suite;
      auto& m = r.record.suites[suite].metrics[name];
      m.samples = {v};
      m.kind = records::MetricKind::timed;
      m.better = records::Better::lower;
      r.wall_s = base ? cur.base_wall_s : cur.head_wall_s;
      r.run_queue_wait_s = (base ? cur.base_wait_share : cur.head_wait_share) * r.wall_s;
      clock += r.wall_s;
      return r;
    };
    const InterleavedOutcome o = run_interleaved(s, side, stop, [&] { return clock; });
    if (o.overall == Overall::regression) {
      ++t.regression;
    } else if (o.overall == Overall::pass) {
      ++t.pass;
    } else {
      ++t.inconclusive;
    }
    t.mean_rounds += static_cast<double>(o.rounds.size()) / runs;
    t.mean_elapsed_s += o.elapsed_s / runs;
  }
  return t;
}

}  // namespace atlas::gates
