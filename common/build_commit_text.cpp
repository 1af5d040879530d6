#include <cctype>

#include "common/build_commit.hpp"

namespace atlas {

std::string build_commit_text() {
  const std::string commit = build_commit();
  if (commit == "unknown") return "commit unknown";
  return "commit " + commit + (build_tree_dirty() ? ", dirty tree" : ", clean tree");
}

std::optional<ReportedBuild> parse_build_commit(std::string_view out) {
  constexpr std::string_view key = "commit ";
  for (std::size_t at = out.find(key); at != std::string_view::npos; at = out.find(key, at + 1)) {
    const std::size_t start = at + key.size();
    if (out.size() < start + 40) break;
    const std::string_view sha = out.substr(start, 40);
    bool hex = true;
    for (char c : sha) hex = hex && (std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'));
    if (!hex) continue;
    const std::string_view rest = out.substr(start + 40);
    if (rest.rfind(", clean tree", 0) == 0) return ReportedBuild{std::string(sha), false};
    if (rest.rfind(", dirty tree", 0) == 0) return ReportedBuild{std::string(sha), true};
  }
  return std::nullopt;
}

}  // namespace atlas
