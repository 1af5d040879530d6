#pragma once
// `atlas-bench records list` as a library: the store's records, filtered, each read and
// classified (what kind of run it is, or why it does not read, or why it cannot stand for its
// path). Its printers are in records/printers/listing_printer.hpp.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "records/store.hpp"

namespace atlas::records {

/// Which records to list; an empty field does not filter.
struct ListingFilter {
  std::string machine_class;
  std::string commit;  ///< a prefix of the full sha
  std::string gate;    ///< gate_or_suite, exactly
};

/// One record of the listing.
struct ListedRecord {
  StoredRecord stored;
  std::optional<RecordKind> kind;  ///< read from the file; empty when it does not read
  std::string error;               ///< why it does not read ("" when it does)
  std::string refused;             ///< records::provenance_problem ("" when it can stand for its path)

  /// "pr", "nightly shard 1/4 merged INVALID REFUSED", or "unreadable".
  std::string kind_text() const;
  /// The active test hooks, comma-separated; "-" when none or unreadable.
  std::string hooks_text() const;
};

/// The records of `store` (records::list_records: oldest first) that pass `filter`. What kind
/// of run each is is read from the file: which of a commit's records are comparable is not
/// visible from the path alone. A record that does not read (a wrong-typed field, a 1e999
/// sample, a file nested too deep) is listed with its reason, and the rest is still listed; one
/// that reads but cannot stand for its path (misfiled, stamped in the future, committed into an
/// ignored store) is listed as refused with the reason every pick and the trends give.
std::vector<ListedRecord> list_store(const std::filesystem::path& store, const ListingFilter& filter);

}  // namespace atlas::records
