#pragma once
// Does a BASELINE value still say what its own history says? Every command that moves a value
// (init, ratchet, accept) appends a history entry whose `new` is the value written; freeze and
// unfreeze repeat it. A value that differs from the last entry's `new` was edited by hand, which
// is how a gate gets loosened without review where no older version of the file exists to
// compare with (a BASELINE new since the merge-base, docs/gates.md).
#include <string>

#include "gates/baseline.hpp"

namespace atlas::gates {

/// "" when `m.value` equals the `new` of its last history entry that has one; otherwise the
/// problem, naming both values and that entry (action, date, commit), or saying the metric has
/// no history entry with a value at all.
std::string history_mismatch(const BaselineMetric& m);

}  // namespace atlas::gates
