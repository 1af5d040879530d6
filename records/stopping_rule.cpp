#include "records/stopping_rule.hpp"

#include <cmath>

#include "records/error.hpp"

namespace atlas::records {

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
  if (s.rounds_run > 0) {
    const double per_round = s.elapsed_s / s.rounds_run;
    if (s.elapsed_s + 2 * per_round > time_cap_s_) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "time cap (%.0f s; another pair of rounds would take %.1f s)", time_cap_s_,
                    2 * per_round);
      return std::string(buf);
    }
  }
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
          {"question", q_ == Question::regression ? "regression" : "two-sided"},
          {"min_rounds", min_rounds_},
          {"max_rounds", max_rounds_},
          {"time_cap_s", time_cap_s_},
          {"confidence", settings_.confidence},
          {"power", settings_.power},
          {"max_disturbed_share", max_disturbed_share_}};
}

}  // namespace atlas::records
