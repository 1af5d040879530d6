#include "common/available_memory.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace atlas {
namespace {

std::optional<std::string> slurp(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo) {
  constexpr std::string_view key = "MemAvailable:";
  for (std::size_t at = 0; at < meminfo.size();) {
    const std::size_t eol = std::min(meminfo.find('\n', at), meminfo.size());
    const std::string_view line = meminfo.substr(at, eol - at);
    at = eol + 1;
    if (line.substr(0, key.size()) != key) continue;
    std::string_view rest = line.substr(key.size());
    const auto kb = parse_u64(rest);
    if (!kb) return std::nullopt;
    if (rest.find("kB") == std::string_view::npos) return std::nullopt;  // proc(5): always kB
    return *kb * 1024;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> available_memory_bytes() {
  std::optional<std::uint64_t> avail;
  if (const auto meminfo = slurp("/proc/meminfo")) avail = parse_mem_available(*meminfo);
  const auto max = slurp("/sys/fs/cgroup/memory.max"), current = slurp("/sys/fs/cgroup/memory.current");
  if (max && current) {
    const auto m = parse_u64(*max), c = parse_u64(*current);  // "max" parses as nullopt: no limit
    if (m && c) {
      const std::uint64_t headroom = *m > *c ? *m - *c : 0;
      avail = avail ? std::min(*avail, headroom) : headroom;
    }
  }
  return avail;
}

}  // namespace atlas
