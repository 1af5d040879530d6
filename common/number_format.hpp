#pragma once
// How every human-readable printer (run and ab tables, diff, gate reports, baseline show, the
// generate summary) writes a measured value, so one figure reads the same in every command and
// format. JSON output keeps full precision; hashes (identities) print as hex elsewhere
// (records::identity_hex).
#include <string>

namespace atlas {

/// Four significant digits without an exponent: 12890 and 17959.8 -> "12890" and "17960" (every
/// integer digit of a value >= 1000 is shown, none after the point), 15.7704648 -> "15.77",
/// 0.012345 -> "0.01235"; trailing zeros dropped (1.5, 42). Below 1e-4 or from 1e15 on, four
/// significant digits with an exponent (3.142e-05). "-" for NaN, "inf"/"-inf".
std::string format_number(double v);

}  // namespace atlas
