#include "engine/formats/json_input.hpp"

#include <set>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/json_depth.hpp"
#include "engine/error.hpp"

namespace atlas::engine {

nlohmann::json parse_json_input(std::string_view text, const std::filesystem::path& file, const std::string& what, bool reject_duplicate_keys) {
  const std::string where = file.string() + ": " + (what.empty() ? std::string() : what + ": ");
  if (json_nesting_depth(text, kMaxJsonNesting) > kMaxJsonNesting)
    throw EngineError(where + "JSON nested deeper than " + std::to_string(kMaxJsonNesting) + " levels");
  try {
    if (!reject_duplicate_keys) return nlohmann::json::parse(text);
    std::vector<std::set<std::string>> keys;  // one set per open object
    std::string duplicate;
    auto cb = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
      using E = nlohmann::json::parse_event_t;
      if (ev == E::object_start) keys.emplace_back();
      else if (ev == E::object_end && !keys.empty()) keys.pop_back();
      else if (ev == E::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
      return true;
    };
    nlohmann::json j = nlohmann::json::parse(text, cb);
    if (!duplicate.empty()) throw EngineError(where + "key \"" + duplicate + "\" appears twice in one object");
    return j;
  } catch (const nlohmann::json::exception& e) {
    throw EngineError(where + "not valid JSON: " + e.what());
  }
}

nlohmann::json read_json_input(const std::filesystem::path& file) { return parse_json_input(atlas::read_file(file), file); }

std::string json_brief(const nlohmann::json& j) {
  std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

}  // namespace atlas::engine
