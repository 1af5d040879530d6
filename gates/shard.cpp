#include "gates/shard.hpp"

#include <charconv>

#include "gates/error.hpp"

namespace atlas::gates {

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  Shard s;
  auto parse_int = [&text](std::string_view part, int& out) {
    return !part.empty() && std::from_chars(part.data(), part.data() + part.size(), out).ptr == part.data() + part.size();
  };
  const std::string_view view(text);
  if (slash == std::string::npos || !parse_int(view.substr(0, slash), s.index) ||
      !parse_int(view.substr(slash + 1), s.count)) {
    throw GateError("--shard '" + text + "': expected i/N, e.g. 0/4");
  }
  if (s.count < 1 || s.index < 0 || s.index >= s.count) {
    throw GateError("--shard '" + text + "': need 0 <= i < N (indices are 0-based)");
  }
  return s;
}

std::vector<std::string> shard_slice(const std::vector<std::string>& suites, const Shard& shard) {
  std::vector<std::string> out;
  for (std::size_t j = static_cast<std::size_t>(shard.index); j < suites.size(); j += static_cast<std::size_t>(shard.count)) {
    out.push_back(suites[j]);
  }
  return out;
}

}  // namespace atlas::gates
