#pragma once
// The decode-anatomy table, laid out the way an engineer reads a decode step:
//   stage | calls/token | launches/token | in graph | host syncs/token | copies H2D/D2H per token
//         | µs/token | share of token
// plus "other (outside stages)" and "token (wall)" rows. A column the source cannot measure
// reads "n/a" (never 0).
#include <string>

#include "suites/decode_anatomy/anatomy_source.hpp"
#include "suites/table.hpp"

namespace atlas::suites {

/// `window`: totals over `tokens` decoded tokens whose wall time summed to `wall_ns`.
/// "in graph" = graph launches / launches, as a percentage. "share of token" = stage time /
/// wall time. The "other" row is wall minus the stage times (when every stage time is known).
Table anatomy_table(const AnatomyWindow& window, double tokens, double wall_ns, const std::string& source_name,
                    const std::string& time_basis);

}  // namespace atlas::suites
