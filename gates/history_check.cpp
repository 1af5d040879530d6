#include "gates/history_check.hpp"


namespace atlas::gates {

std::string history_mismatch(const BaselineMetric& m) {
  for (auto it = m.history.rbegin(); it != m.history.rend(); ++it) {
    if (!it->new_value) continue;
    if (*it->new_value == m.value) return "";
    const std::string commit = it->commit.size() > 12 ? it->commit.substr(0, 12) : it->commit;
    // Full precision: the point is that the two differ, however little.
    return "value " + nlohmann::json(m.value).dump() + " does not match its history: the last entry (" +
           to_string(it->action) + " " + it->date + " " + commit + ") set it to " + nlohmann::json(*it->new_value).dump() +
           "; edited by hand? A value moves only with `atlas-bench baseline ratchet` or `accept`";
  }
  return "value " + nlohmann::json(m.value).dump() + " has no history entry that set it (init, ratchet or accept)";
}

}  // namespace atlas::gates
