#include "records/paired_judgement.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <vector>

#include "common/number_format.hpp"
#include "records/error.hpp"
#include "records/signed_rank.hpp"
#include "records/stats.hpp"

namespace atlas::records {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A judgement's reason says "n/a" where no estimate exists yet (too few rounds).
std::string pct(double x) { return std::isnan(x) ? "n/a" : format_fraction_percent(x, true); }
std::string pct_abs(double x) { return std::isnan(x) ? "n/a" : format_fraction_percent(x, false); }

void check_settings(const PairedSettings& s) {
  if (!(s.confidence > 0 && s.confidence < 1))
    throw RecordError("paired judgement: confidence " + std::to_string(s.confidence) + " is not in (0,1)");
  if (!(s.power > 0 && s.power < 1))
    throw RecordError("paired judgement: power " + std::to_string(s.power) + " is not in (0,1)");
}

double rel(double log_change) { return std::isinf(log_change) ? log_change : std::expm1(log_change); }

}  // namespace

const char* to_string(PairedStatus s) {
  switch (s) {
    case PairedStatus::regression: return "regression";
    case PairedStatus::improved: return "improved";
    case PairedStatus::same: return "same";
    case PairedStatus::undecided: return "undecided";
  }
  return "?";
}

double aa_noise(std::span<const double> v) {
  if (v.size() < 3) return kNaN;
  std::vector<double> r;
  for (std::size_t i = 1; i < v.size(); ++i) r.push_back(std::fabs(std::log(v[i] / v[i - 1])));
  return 1.4826 * stats::median(r);
}

double minimum_detectable_effect(double sigma, int rounds, const PairedSettings& s) {
  check_settings(s);
  if (std::isnan(sigma) || rounds < 1) return kNaN;
  const double z = stats::normal_quantile(1 - (1 - s.confidence) / 2) + stats::normal_quantile(s.power);
  return std::expm1(z * sigma * std::sqrt(std::numbers::pi / (3.0 * rounds)));
}

int min_rounds_for(const PairedSettings& s) {
  check_settings(s);
  return static_cast<int>(std::ceil(std::log2(2 / (1 - s.confidence))));
}

PairedVerdict judge_paired(std::span<const double> base, std::span<const double> head, Better better, double tolerance,
                           const PairedSettings& s) {
  check_settings(s);
  if (base.size() != head.size())
    throw RecordError("paired judgement: " + std::to_string(base.size()) + " base values but " +
                      std::to_string(head.size()) + " head values (one of each per round)");
  if (!(tolerance >= 0)) throw RecordError("paired judgement: tolerance " + std::to_string(tolerance) + " is negative");
  for (std::size_t i = 0; i < base.size(); ++i) {
    if (!(std::isfinite(base[i]) && base[i] > 0) || !(std::isfinite(head[i]) && head[i] > 0))
      throw RecordError("paired judgement: round " + std::to_string(i) + " has base " + std::to_string(base[i]) +
                        ", head " + std::to_string(head[i]) + " (timed values must be finite and > 0)");
  }
  PairedVerdict v;
  v.rounds = static_cast<int>(base.size());
  v.tolerance = tolerance;
  v.confidence = s.confidence;
  std::vector<double> d(base.size());
  for (std::size_t i = 0; i < d.size(); ++i)
    d[i] = better == Better::lower ? std::log(head[i] / base[i]) : std::log(base[i] / head[i]);
  v.aa_noise = aa_noise(base);
  v.mde = minimum_detectable_effect(v.aa_noise, v.rounds, s);
  const std::string noise_text =
      "A/A noise " + pct_abs(v.aa_noise) + ", minimum detectable effect " + pct_abs(v.mde) + " at " +
      std::to_string(v.rounds) + " rounds";
  if (d.empty()) {
    v.change = kNaN;
    v.ci_lo = -std::numeric_limits<double>::infinity();
    v.ci_hi = std::numeric_limits<double>::infinity();
    v.why = "no rounds";
    return v;
  }
  const auto hl = stats::hodges_lehmann(d, s.confidence);
  v.p_value = stats::wilcoxon_signed_rank(d).p_value;
  v.change = rel(hl.estimate);
  v.ci_lo = rel(hl.ci.lo);
  v.ci_hi = rel(hl.ci.hi);
  v.ci_finite = hl.ci_finite;
  v.achieved_confidence = hl.achieved_confidence;
  char conf[16];
  std::snprintf(conf, sizeof conf, "%g%%", 100 * s.confidence);
  if (!hl.ci_finite) {
    v.why = std::to_string(v.rounds) + " rounds: the exact signed-rank interval needs at least " +
            std::to_string(hl.min_n) + " rounds to reach " + conf + " confidence, so no difference can be shown";
    return v;
  }
  const double log_tol = std::log1p(tolerance);
  const std::string est = "change " + pct(v.change) + ", " + conf + " interval [" + pct(v.ci_lo) + ", " +
                          pct(v.ci_hi) + "], tolerance " + pct_abs(tolerance);
  v.rules_out_regression = hl.ci.hi < log_tol;
  if (hl.ci.lo > 0 && hl.estimate > log_tol) {
    v.status = PairedStatus::regression;
    v.why = "worse: " + est + " (interval above 0, estimate above the tolerance)";
  } else if (hl.ci.hi < 0 && hl.estimate < -log_tol) {
    v.status = PairedStatus::improved;
    v.why = "better: " + est;
  } else if (hl.ci.lo > -log_tol && hl.ci.hi < log_tol) {
    v.status = PairedStatus::same;
    v.why = "same: " + est + " (a change of the tolerance would have been detected)";
  } else {
    v.status = PairedStatus::undecided;
    v.why = "undecided: " + est + "; " + noise_text;
    if (!std::isnan(v.mde) && v.mde > tolerance) v.why += " > tolerance";
  }
  return v;
}

nlohmann::json to_json(const PairedVerdict& v) {
  auto num = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"status", to_string(v.status)}, {"rounds", v.rounds},
          {"tolerance", v.tolerance},       {"confidence", v.confidence},
          {"change", num(v.change)},
          {"ci_lo", num(v.ci_lo)},          {"ci_hi", num(v.ci_hi)},
          {"ci_finite", v.ci_finite},       {"achieved_confidence", v.achieved_confidence},
          {"p_value", v.p_value},           {"aa_noise", num(v.aa_noise)},
          {"mde", num(v.mde)},              {"rules_out_regression", v.rules_out_regression},
          {"why", v.why}};
}

}  // namespace atlas::records
