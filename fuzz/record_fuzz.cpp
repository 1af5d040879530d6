// Benchmark records (.benchmarks/*.json, records/record_io.hpp): the JSON text, then the record
// schema. A record that parses must print (record_text) and read back.
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"
#include "records/record_io.hpp"

ATLAS_FUZZ_TARGET(record) {
  using namespace atlas;
  const nlohmann::json j = nlohmann::json::parse(fuzz::text(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  records::Record r;
  try {
    r = records::record_from_json(j, "fuzz");
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
    return 0;
  }
  std::string printed;
  try {
    printed = records::record_text(r);
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
    return 0;  // documented: a record that would not read back is refused when written
  }
  try {
    (void)records::record_from_json(nlohmann::json::parse(printed), "fuzz (printed)");
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
    fuzz::check(false, "a record that printed reads back");
  }
  return 0;
}
