#pragma once
// JSON as text for files people read (records, BASELINEs): indented like nlohmann's dump(2) for
// the first kPrettyJsonLevels levels of nesting, and compact (dump()) below them. Full indentation
// writes 2·depth spaces on every line, so a hostile record nested d levels deep came out
// O(d²) bytes for O(d) in (`records merge`: 143 KB in, 200 MB out); with the indentation
// bounded, output bytes are at most a constant times input bytes whatever the depth. Real files
// nest at most 9 levels, so they are written exactly as dump(2) writes them.
#include <string>

#include <nlohmann/json.hpp>

namespace atlas {

/// Levels of nesting written indented; containers deeper than this are written on one line.
inline constexpr int kPrettyJsonLevels = 12;

/// `j` with a 2-space indent down to kPrettyJsonLevels levels, compact below; no trailing
/// newline. `handler` as in nlohmann::json::dump (strict throws on invalid UTF-8).
std::string dump_pretty(const nlohmann::json& j,
                        nlohmann::json::error_handler_t handler = nlohmann::json::error_handler_t::strict);

}  // namespace atlas
