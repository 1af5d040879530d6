#include "records/stopping_rule.hpp"

#include <cmath>
#include <cstdio>

#include "records/error.hpp"

namespace atlas::records {
namespace {

const char* question_name(Question q) { return q == Question::regression ? "regression" : "two-sided"; }

/// Why to stop for time: another pair of rounds, at the mean round time so far, would pass the
/// cap (both rules stop a pair early rather than overrun it).
std::optional<std::string> time_cap_reached(const RoundState& s, double time_cap_s) {
  if (s.rounds_run <= 0) return std::nullopt;
  const double per_round = s.elapsed_s / s.rounds_run;
  if (s.elapsed_s + 2 * per_round <= time_cap_s) return std::nullopt;
  char buf[96];
  std::snprintf(buf, sizeof buf, "time cap (%.0f s; another pair of rounds would take %.1f s)", time_cap_s, 2 * per_round);
  return std::string(buf);
}

}  // namespace

std::optional<Look> StoppingRule::look(const RoundState&, double fallback_confidence) const {
  return Look{fallback_confidence, false, ""};
}

double StoppingRule::closing_confidence(const RoundState&, double fallback_confidence) const {
  return fallback_confidence;
}

DecidedOrCap::DecidedOrCap(Question q, int min_rounds, int max_rounds, double time_cap_s, PairedSettings s,
                           double max_disturbed_share)
    : q_(q),
      min_rounds_(min_rounds),
      max_rounds_(max_rounds),
      time_cap_s_(time_cap_s),
      settings_(s),
      max_disturbed_share_(max_disturbed_share) {
  if (min_rounds_ < 1) throw RecordError("stopping rule: min_rounds " + std::to_string(min_rounds) + " must be >= 1");
  if (max_rounds_ < min_rounds_)
    throw RecordError("stopping rule: max_rounds " + std::to_string(max_rounds) + " is below min_rounds " +
                      std::to_string(min_rounds));
  if (!(time_cap_s_ > 0)) throw RecordError("stopping rule: time cap " + std::to_string(time_cap_s) + " s must be > 0");
}

bool DecidedOrCap::decided(Question q, const PairedVerdict& v) {
  if (v.status == PairedStatus::regression) return true;
  if (q == Question::regression) return v.rules_out_regression;
  return v.status != PairedStatus::undecided;
}

std::optional<std::string> DecidedOrCap::should_stop(const RoundState& s) const {
  if (s.rounds_run >= max_rounds_) return "round cap (" + std::to_string(max_rounds_) + " rounds)";
  if (auto why = time_cap_reached(s, time_cap_s_)) return why;
  const int disturbed = s.rounds_run - s.rounds;
  if (s.rounds_run >= min_rounds_ && disturbed > max_disturbed_share_ * s.rounds_run)
    return "load: " + std::to_string(disturbed) + " of " + std::to_string(s.rounds_run) + " rounds disturbed";
  if (s.rounds < min_rounds_) return std::nullopt;
  bool all_decided = true, all_hopeless = true;
  for (const auto& v : s.verdicts) {
    if (decided(q_, v)) continue;
    all_decided = false;
    const double mde_at_cap = minimum_detectable_effect(v.aa_noise, max_rounds_, settings_);
    if (!(mde_at_cap > v.tolerance)) all_hopeless = false;
  }
  if (all_decided) return "every metric decided";
  if (all_hopeless) return "noise: the undecided metrics could not be decided within " + std::to_string(max_rounds_) + " rounds";
  return std::nullopt;
}

nlohmann::json DecidedOrCap::describe() const {
  return {{"rule", "decided-or-cap"},
          {"question", question_name(q_)},
          {"min_rounds", min_rounds_},
          {"max_rounds", max_rounds_},
          {"time_cap_s", time_cap_s_},
          {"confidence", settings_.confidence},
          {"power", settings_.power},
          {"max_disturbed_share", max_disturbed_share_}};
}

std::string check_looks(const std::vector<int>& looks, double confidence) {
  if (looks.empty()) return "needs at least one look";
  if (!(confidence > 0 && confidence < 1)) return "confidence " + std::to_string(confidence) + " is not in (0,1)";
  for (std::size_t i = 1; i < looks.size(); ++i)
    if (looks[i] <= looks[i - 1])
      return "looks must increase: " + std::to_string(looks[i]) + " follows " + std::to_string(looks[i - 1]);
  const double per_look = 1 - (1 - confidence) / static_cast<double>(looks.size());
  const int floor_rounds = min_rounds_for(PairedSettings{per_look, 0.95});
  if (looks.front() < floor_rounds) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g%%", 100 * per_look);
    return "the first look at " + std::to_string(looks.front()) + " rounds is below " + std::to_string(floor_rounds) +
           ", the fewest rounds in which the exact interval at " + buf + " (each of " + std::to_string(looks.size()) +
           " looks) can exclude 0";
  }
  return "";
}

GroupSequential::GroupSequential(Question q, std::vector<int> looks, int max_rounds_run, double time_cap_s,
                                 double confidence)
    : q_(q), looks_(std::move(looks)), max_rounds_run_(max_rounds_run), time_cap_s_(time_cap_s), alpha_(1 - confidence) {
  if (const std::string why = check_looks(looks_, confidence); !why.empty())
    throw RecordError("stopping rule: " + why);
  if (max_rounds_run_ < looks_.back())
    throw RecordError("stopping rule: max_rounds " + std::to_string(max_rounds_run) + " is below the last look at " +
                      std::to_string(looks_.back()) + " rounds");
  if (!(time_cap_s_ > 0)) throw RecordError("stopping rule: time cap " + std::to_string(time_cap_s) + " s must be > 0");
}

double GroupSequential::look_confidence() const { return 1 - alpha_ / static_cast<double>(looks_.size()); }

double GroupSequential::closing_confidence(const RoundState& s, double) const {
  // What the looks not made yet would have spent: a final look before the last spends all of it.
  const int k = static_cast<int>(looks_.size());
  const int made = std::min(s.looks_made, k);
  return made >= k ? look_confidence() : 1 - (alpha_ - alpha_ * made / k);
}

std::optional<Look> GroupSequential::look(const RoundState& s, double fallback) const {
  const int k = static_cast<int>(looks_.size());
  const int made = std::min(s.looks_made, k);
  const double left = closing_confidence(s, fallback);
  if (s.rounds_run >= max_rounds_run_) return Look{left, true, "round cap (" + std::to_string(max_rounds_run_) + " rounds)"};
  if (auto why = time_cap_reached(s, time_cap_s_)) return Look{left, true, *why};
  // No stop for disturbed rounds: they are not judged, and the time budget is spent waiting for
  // rounds that were given their CPU (a gate that stopped at a quarter disturbed ended
  // inconclusive in 4 of 4 runs beside a compile, after 19-27 s of its 120 s).
  if (made >= k || s.rounds < looks_[static_cast<std::size_t>(made)]) return std::nullopt;
  if (made + 1 == k) return Look{look_confidence(), true, "last look (" + std::to_string(s.rounds) + " rounds)"};
  return Look{look_confidence(), false, ""};
}

std::optional<std::string> GroupSequential::should_stop(const RoundState& s) const {
  // The gate's question is answered by one regression (exit 1 whatever the rest says): more
  // rounds for the other metrics would only cost time (a planted run waited 80 rounds, ~50 s,
  // on a noisy TTFT metric after us_per_token had regressed at the first looks).
  if (q_ == Question::regression)
    for (const auto& v : s.verdicts)
      if (v.status == PairedStatus::regression) return "a regression decided";
  for (const auto& v : s.verdicts)
    if (!DecidedOrCap::decided(q_, v)) return std::nullopt;
  return "every metric decided";
}

nlohmann::json GroupSequential::describe() const {
  return {{"rule", "group-sequential"},
          {"question", question_name(q_)},
          {"looks", looks_},
          {"alpha", alpha_},
          {"alpha_per_look", alpha_ / static_cast<double>(looks_.size())},
          {"spending", "Bonferroni: alpha / looks at each scheduled look; a final look at a cap spends what is left"},
          {"min_rounds", looks_.front()},
          {"max_rounds", max_rounds_run_},
          {"time_cap_s", time_cap_s_},
          {"confidence", 1 - alpha_},
          {"look_confidence", look_confidence()}};
}

}  // namespace atlas::records
