#pragma once
// Output formats of `records list` (records/listing.hpp): the project's one printer interface
// (common/printer.hpp).
#include <memory>
#include <string_view>
#include <vector>

#include "common/printer.hpp"
#include "records/listing.hpp"

namespace atlas::records {

using ListingPrinter = Printer<std::vector<ListedRecord>>;

/// "text": one aligned row per record under a header (nothing at all for no records): utc,
/// machine_class, commit (12 characters, "-dirty"), kind, target, test_hooks, path.
/// "json": an array of objects (path, machine_class, commit, dirty, gate_or_suite, utc, kind,
/// target, test_hooks, valid; error when unreadable, refused when refused).
/// Throws RecordError naming the format otherwise.
std::unique_ptr<ListingPrinter> make_listing_printer(std::string_view format);

}  // namespace atlas::records
