#pragma once
// Ordering names that carry numbers ("load/rate=20/ttft_ms") as a reader expects: the numbers
// compare by value, so a sweep lists rate=20, rate=80, rate=200 rather than the text order 20,
// 200, 80. The rest of the name compares byte by byte.
#include <string_view>

namespace atlas {

/// Strict weak order: walks both names; where both have a number (digits, optionally a '.' and
/// more digits: "0.25", "200") the numbers compare by value, a tie going to the shorter spelling;
/// elsewhere characters compare as unsigned bytes. Equal names are not less.
bool natural_less(std::string_view a, std::string_view b) noexcept;

}  // namespace atlas
