#pragma once
// How every human-readable printer (run and ab tables, diff, gate reports, baseline show, the
// generate summary) writes a measured value and a percentage, so one figure reads the same in
// every command and format. JSON output keeps full precision; hashes (identities) print as hex elsewhere
// (records::identity_hex).
#include <string>

namespace atlas {

/// Four significant digits without an exponent: 12890 and 17959.8 -> "12890" and "17960" (every
/// integer digit of a value >= 1000 is shown, none after the point), 15.7704648 -> "15.77",
/// 0.012345 -> "0.01235"; trailing zeros dropped (1.5, 42). Below 1e-4 or from 1e15 on, four
/// significant digits with an exponent (3.142e-05). "-" for NaN, "inf"/"-inf".
std::string format_number(double v);

/// A percentage (`percent` in points: 3.214 -> "3.21%") with two decimals, "+"/"-" in front when
/// `sign` (a change: "+3.21%"). A non-zero value too small for two decimals keeps two significant
/// digits ("+0.00043%"): "+0.00%" beside a verdict reads as no change at all, which a non-zero
/// change is not. "-" for NaN, "+inf"/"-inf" for infinities. The one way every printer and
/// judgement text writes a percentage.
std::string format_percent(double percent, bool sign);

/// format_percent of a fraction (0.0321 -> "3.21%"), as the paired judgements hold changes.
std::string format_fraction_percent(double fraction, bool sign);

}  // namespace atlas
