#include "common/json_text.hpp"

namespace atlas {
namespace {

using nlohmann::json;

void put(const json& j, int depth, json::error_handler_t handler, std::string& out) {
  const bool container = j.is_object() || j.is_array();
  if (!container || j.empty() || depth >= kPrettyJsonLevels) {
    out += j.dump(-1, ' ', false, handler);
    return;
  }
  const std::string inner(static_cast<std::size_t>(2 * (depth + 1)), ' ');
  out += j.is_object() ? "{\n" : "[\n";
  bool first = true;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!first) out += ",\n";
    first = false;
    out += inner;
    if (j.is_object()) {
      out += json(it.key()).dump(-1, ' ', false, handler);
      out += ": ";
    }
    put(*it, depth + 1, handler, out);
  }
  out += '\n';
  out.append(static_cast<std::size_t>(2 * depth), ' ');
  out += j.is_object() ? '}' : ']';
}

}  // namespace

std::string dump_pretty(const json& j, json::error_handler_t handler) {
  std::string out;
  put(j, 0, handler, out);
  return out;
}

}  // namespace atlas
