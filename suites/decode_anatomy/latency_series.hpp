#pragma once
// A decode run's per-token latency series summarised: the spread of its inter-token gaps and the
// largest stall that repeats every P steps (a graph re-capture per context bucket, an allocator
// growing a buffer, a host thread waking on a timer), which a mean or a p99 over the run hides.
#include <optional>
#include <span>

#include <nlohmann/json.hpp>

namespace atlas::suites {

/// A stall that comes back every `period` steps, at step `phase` (mod period) of the series.
struct PeriodicStall {
  int period = 0;           ///< P, steps between stalls (>= 2)
  int phase = 0;            ///< index of the first stalled gap, 0 <= phase < period
  int occurrences = 0;      ///< gaps at phase + j*period in the series
  double excess_us = 0;     ///< median of those gaps minus the series' median, µs
};

struct LatencySeriesSummary {
  int n = 0;                ///< gaps in the series
  double p50_us = 0, p99_us = 0, max_us = 0;  ///< type-7 percentiles (records/stats.hpp), µs
  double robust_sd_us = 0;  ///< 1.4826 * MAD: the spread a gap must stand out of to count as a stall
  std::optional<PeriodicStall> stall;  ///< the largest periodic stall, when one stands out
};

/// Summarises `gaps_us` (inter-token gaps in step order, µs). The periodic stall is found by
/// folding the series at every period P (2 <= P <= n/6, so each phase holds >= 6 gaps): a phase
/// whose gaps are at least 75 % above median + 4 robust SDs (1.4826 * MAD, floored at 1 % of the
/// median so a quantised clock's zero MAD does not make every wobble a stall) is a stall
/// candidate, its size the median of its gaps minus the series' median. Of the candidates within
/// 80 % of the largest, the shortest period wins (a stall every 16 steps also folds cleanly at 32
/// and 48). Epoch folding is the classic period search for pulsed signals (Leahy et al. 1983,
/// ApJ 266:160); this is its robust, threshold form for step series. No stall: nothing, never a 0.
/// Throws std::invalid_argument for fewer than 2 gaps.
LatencySeriesSummary summarize_latency_series(std::span<const double> gaps_us);

/// {n, p50_us, p99_us, max_us, robust_sd_us, periodic_stall: {period, phase, occurrences,
/// excess_us} | null} for a record's details.
nlohmann::json to_json(const LatencySeriesSummary& s);

}  // namespace atlas::suites
