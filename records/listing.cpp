#include "records/listing.hpp"

#include <utility>

#include "common/error.hpp"
#include "records/record_io.hpp"

namespace atlas::records {

std::string ListedRecord::kind_text() const {
  if (!kind) return "unreadable";
  std::string t = kind->gate_or_suite;
  if (!kind->shard.empty()) t += " shard " + kind->shard;
  if (kind->merged) t += " merged";
  if (!kind->valid) t += " INVALID";
  if (!refused.empty()) t += " REFUSED";
  return t;
}

std::string ListedRecord::hooks_text() const {
  if (!kind || kind->hooks.empty()) return "-";
  std::string t;
  for (const auto& h : kind->hooks) t += (t.empty() ? "" : ",") + h;
  return t;
}

std::vector<ListedRecord> list_store(const std::filesystem::path& store, const ListingFilter& filter) {
  std::vector<ListedRecord> rows;
  for (auto& s : list_records(store)) {
    if (!filter.machine_class.empty() && s.machine_class != filter.machine_class) continue;
    if (!filter.commit.empty() && s.commit.rfind(filter.commit, 0) != 0) continue;
    if (!filter.gate.empty() && s.gate_or_suite != filter.gate) continue;
    ListedRecord row{std::move(s), std::nullopt, "", ""};
    try {
      const Record r = read_record(row.stored.path);
      row.kind = kind_of(r);
      row.refused = provenance_problem(r, row.stored);
    } catch (const atlas::Error& e) {
      row.error = e.what();
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace atlas::records
