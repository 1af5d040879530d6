#pragma once
// Parsing untrusted JSON into nlohmann::ordered_json in linear time.
//
// nlohmann's own parser inserts every object member through ordered_map::operator[], which
// searches the members so far one by one for a duplicate: an object of n members costs n^2/2
// string comparisons. A request with a 20,000-entry `logit_bias` took 400 ms to parse, and a
// 16 MiB body holding one object of a million members would take hours of a core. This parser
// drives nlohmann's SAX interface and keeps a hash index per object past a few members; the
// result is the same value (member order as written; a repeated key keeps its first position
// and its last value, as nlohmann does).
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace atlas::server {

/// The parsed value, or nullopt when `text` is not valid JSON.
std::optional<nlohmann::ordered_json> parse_ordered_json(std::string_view text);

}  // namespace atlas::server
