#pragma once
// Counted CPU cost (instructions and simulated cache misses under callgrind) judged where it is
// comparable: the merge-base and head counted in the same job on this CPU. Counts from another
// CPU of the same machine class differ (CI runners of one label are not one CPU: a new user's
// 2-core AMD EPYC VM counted other values than the VM the committed BASELINE was made on), so a
// stored count is compared only where the CPU fingerprint (`counted_on`: CPU model and flags,
// valgrind version, cache geometry) matches, and never as an error where it does not.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gates/baseline.hpp"
#include "gates/compare.hpp"
#include "gates/config.hpp"
#include "records/record.hpp"

namespace atlas::gates {

/// The suite whose metrics are counted under callgrind (suites/instructions).
inline constexpr const char* kCountedSuite = "instructions";

/// Judges the head's `suite` metrics against the merge-base's, counted on this CPU: the base
/// record's medians become a one-off baseline with the config's tolerances (init_baseline's
/// rule: `metric_tolerance` prefixes, else the kind's default) and the head is compared with
/// the stored-BASELINE rule for counted metrics (exact beyond the tolerance). Each verdict's
/// `why` starts with "vs merge-base <commit12>". Throws GateError when the two records counted on
/// different CPUs (`counted_on` differs: they cannot be compared) or the base has no such suite.
Comparison compare_counted_with_base(const records::Record& head, const records::Record& base, const GateConfig& cfg,
                                     const std::string& base_commit, const std::string& suite = kCountedSuite);

/// Whether the stored baseline's counts of `suite` were made on the CPU `head` ran on: its
/// identity's config for the suite equals the head's (counted_on included). False when the
/// baseline has no identity for the suite.
bool stored_counts_match(const Baseline& stored, const records::Record& head, const std::string& suite = kCountedSuite);

/// `b` without the metrics of `suite` and without the suite in its identity (the gate judges
/// them itself, against the merge-base or where the CPU matches).
Baseline without_suite(Baseline b, const std::string& suite = kCountedSuite);

/// The CPU a suite's counts were made on, for messages: "<cpu_model>, flags sha256 <12 hex>,
/// <valgrind>"; "unknown" when the config has no counted_on.
std::string counted_on_text(const nlohmann::json& suite_config);

}  // namespace atlas::gates
