// BASELINE files (baselines/<machine_class>/<gate>.BASELINE.json, gates/baseline.hpp): the JSON
// text, then every field. A baseline that parses must serialise and parse again.
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "fuzz/fuzz_target.hpp"
#include "gates/baseline.hpp"

ATLAS_FUZZ_TARGET(baseline) {
  using namespace atlas;
  const nlohmann::json j = nlohmann::json::parse(fuzz::text(data, size), nullptr, false);
  if (j.is_discarded()) return 0;
  gates::Baseline b;
  try {
    b = gates::parse_baseline(j, "fuzz");
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
    return 0;
  }
  try {
    (void)gates::parse_baseline(gates::to_json(b), "fuzz (written)");
  } catch (const InputError& e) {
    atlas::fuzz::rejected(e);
    fuzz::check(false, "a baseline that parsed serialises and parses again");
  }
  return 0;
}
