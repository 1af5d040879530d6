#include "trends/commit_times.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

#include "common/process.hpp"

namespace atlas::trends {

std::function<std::optional<std::int64_t>(const std::string& sha)> git_commit_times(const std::filesystem::path& repo_dir) {
  auto cache = std::make_shared<std::map<std::string, std::optional<std::int64_t>>>();
  return [repo_dir, cache](const std::string& sha) -> std::optional<std::int64_t> {
    if (const auto it = cache->find(sha); it != cache->end()) return it->second;
    std::optional<std::int64_t> t;
    // Only a hex sha reaches git: a folder name of the store is outside input.
    const bool hex = sha.size() >= 7 && sha.size() <= 64 &&
                     std::all_of(sha.begin(), sha.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
    if (hex) {
      try {
        const auto r = run_process({"git", "-C", repo_dir.string(), "show", "-s", "--format=%ct", sha + "^{commit}"}, {});
        if (r.exit_status == 0) {
          try {
            t = std::stoll(r.out);
          } catch (const std::exception&) {
            t = std::nullopt;
          }
        }
      } catch (const std::exception&) {
        t = std::nullopt;  // no pipe: order by the records
      }
    }
    (*cache)[sha] = t;
    return t;
  };
}

}  // namespace atlas::trends
