#pragma once
// One judgement for interleaved A/B samples, shared by `atlas-bench ab` and the gate's timed
// check against the merge-base: per round one base value and one head value measured minutes
// (or milliseconds) apart on the same box, so drift and steady load hit both alike.
//
// The rule (docs/gates.md, "Timed metrics: interleaved paired judgement"):
//   d_i = ln(head_i / base_i) for lower-is-better metrics (ln(base_i / head_i) for higher), so
//   d > 0 means head is worse. The Hodges–Lehmann estimate of the centre of d and its exact
//   distribution-free interval at `confidence` (Wilcoxon signed-rank; records/signed_rank.hpp)
//   are turned back into relative changes (e^x − 1). With tolerance τ (relative):
//     regression  CI_lo > 0 and estimate > τ  (significantly worse, by more than tolerated:
//                 asv's "factor AND test", in paired form)
//     improved    CI_hi < 0 and estimate < −τ
//     same        −τ < CI_lo and CI_hi < τ   (equivalence: a change of τ would have been seen;
//                 Pinpoint says SAME only with that power, FDA/Schuirmann's TOST in interval form)
//     undecided   anything else: too few rounds (the exact test cannot reach `confidence` with
//                 fewer than log2(2/(1−confidence)) rounds: 8 at 0.99) or too much noise.
//   The gate asks one question, "is head worse by τ?", so for it CI_hi < τ already answers no
//   (rules_out_regression) even when the interval still reaches below −τ.
// Noise is measured, not assumed: the A/A spread of the base side alone, σ_AA = 1.4826 ·
// median |ln(base_{i+1} / base_i)| (successive base runs; the MAD scale makes it the standard
// deviation for normal data and robust to one disturbed run), and the minimum detectable effect
// at n rounds is MDE = (z_{1−a/2} + z_{power}) · σ_AA · sqrt(π / (3n)), a = 1 − confidence:
// the normal-theory power formula with the signed-rank test's efficiency 3/π (Hodges & Lehmann
// 1956). A metric whose MDE at the most rounds allowed exceeds τ cannot be gated on this box.
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "records/metric.hpp"

namespace atlas::records {

struct PairedSettings {
  double confidence = 0.99;  ///< two-sided coverage of the interval (0.5 % per side)
  double power = 0.95;       ///< power the minimum detectable effect is quoted at
};

enum class PairedStatus { regression, improved, same, undecided };
const char* to_string(PairedStatus s);

struct PairedVerdict {
  PairedStatus status = PairedStatus::undecided;
  int rounds = 0;                ///< pairs judged
  double tolerance = 0;          ///< τ, relative (0.03 = 3 %)
  double change = 0;             ///< Hodges–Lehmann estimate as a relative change, + = head worse
  double confidence = 0;         ///< the interval's nominal two-sided coverage (the look's, in the gate)
  double ci_lo = 0, ci_hi = 0;   ///< interval of the relative change (± inf when too few rounds)
  bool ci_finite = false;
  double achieved_confidence = 0;
  double p_value = 1;            ///< Wilcoxon signed-rank, two-sided, exact
  double aa_noise = 0;           ///< σ_AA, relative (NaN with fewer than 3 base values)
  double mde = 0;                ///< minimum detectable effect at `rounds`, relative (NaN without σ_AA)
  bool rules_out_regression = false;  ///< CI_hi < τ: head is not worse by the tolerance
  std::string why;               ///< one sentence with the numbers
};

/// Judges round-paired values. `base[i]` and `head[i]` are round i's value of each side, rounds
/// in time order. Throws RecordError when the spans differ in length, a value is not finite and
/// positive, the tolerance is negative or confidence/power are not in (0,1).
PairedVerdict judge_paired(std::span<const double> base, std::span<const double> head, Better better,
                           double tolerance, const PairedSettings& s = {});

/// σ_AA of a time-ordered series of one side's values (see the header comment); NaN for < 3.
double aa_noise(std::span<const double> side_values);

/// MDE at `rounds` for a given σ_AA (relative); NaN when σ_AA is NaN or rounds < 1.
double minimum_detectable_effect(double aa_sigma, int rounds, const PairedSettings& s = {});

/// The fewest rounds for which the exact interval at `s.confidence` is finite.
int min_rounds_for(const PairedSettings& s);

nlohmann::json to_json(const PairedVerdict& v);

}  // namespace atlas::records
