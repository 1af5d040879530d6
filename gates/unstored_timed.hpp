#pragma once
// What a "new" timed row means on a machine class whose stored BASELINE holds no timed values
// (docs/gates.md: timed metrics are judged against the merge-base there, and `baseline ratchet`
// never stores one). judge_metric's generic "`baseline ratchet` adds it" is false there.
#include <string>

#include "gates/compare.hpp"
#include "gates/config.hpp"

namespace atlas::gates {

/// How the `why` of a timed metric that is reported but never gated on a class begins (the
/// class's name follows); the text printer folds such rows into one line by it.
inline constexpr const char* kUnstoredTimedWhy = "timed: reported, not gated on ";

/// Rewrites the `why` of every timed `new` verdict in `c` when `machine_class` is not one of the
/// config's quiet classes: the metrics of the config's timed section are "judged against the
/// merge-base" (or, when `timed_skipped` says why it did not run, that it would be), the others
/// "reported, not gated". Leaves everything else alone.
void explain_unstored_timed(Comparison& c, const GateConfig& cfg, const std::string& machine_class,
                            const std::string& timed_skipped = "");

}  // namespace atlas::gates
