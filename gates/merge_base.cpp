#include "gates/merge_base.hpp"

#include "gates/process.hpp"

namespace atlas::gates {
namespace {

namespace fs = std::filesystem;

ProcessResult git(const fs::path& cwd, std::vector<std::string> args) {
  args.insert(args.begin(), "git");
  return run_process(args, cwd);
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string tried(const std::vector<std::string>& c) {
  std::string out;
  for (const auto& r : c) out += (out.empty() ? "" : " and ") + r;
  return out;
}

}  // namespace

MergeBase find_merge_base(const fs::path& dir, const TargetRef& target) {
  MergeBase mb;
  mb.target_source = target.source;
  std::error_code ec;
  const fs::path start = fs::is_directory(dir, ec) ? dir : dir.parent_path();
  const auto top = git(start.empty() ? fs::current_path() : start, {"rev-parse", "--show-toplevel"});
  if (top.exit_status != 0) {
    mb.why_not = fs::absolute(start, ec).string() + " is not inside a git checkout (" + trim(top.err) + ")";
    return mb;
  }
  mb.root = fs::canonical(trim(top.out));
  mb.state = MergeBaseState::unavailable;
  const bool shallow = trim(git(mb.root, {"rev-parse", "--is-shallow-repository"}).out) == "true";
  const std::string hint =
      shallow ? "; this is a shallow checkout: fetch the target branch with its history (actions/checkout: "
                "fetch-depth: 0)"
              : "";
  for (const auto& c : target.candidates) {
    if (git(mb.root, {"rev-parse", "--verify", "--quiet", c + "^{commit}"}).exit_status == 0) {
      mb.target = c;
      break;
    }
  }
  if (mb.target.empty()) {
    mb.why_not = "target branch not found (tried " + tried(target.candidates) + ", from " + target.source + ")" + hint;
    return mb;
  }
  const auto base = git(mb.root, {"merge-base", "HEAD", mb.target});
  if (base.exit_status != 0) {
    mb.why_not = "git merge-base HEAD " + mb.target + " failed" + (trim(base.err).empty() ? "" : ": " + trim(base.err)) +
                 (shallow ? hint : " (no common history)");
    return mb;
  }
  mb.commit = trim(base.out);
  mb.state = MergeBaseState::found;
  return mb;
}

std::optional<std::string> text_at_merge_base(const MergeBase& mb, const std::string& rel) {
  if (!mb.found()) return std::nullopt;
  // ls-tree first: `git show` of a missing path and of a failing git look alike.
  const auto listed = git(mb.root, {"ls-tree", "--name-only", mb.commit, "--", rel});
  if (listed.exit_status != 0 || trim(listed.out) != rel) return std::nullopt;
  const auto shown = git(mb.root, {"show", mb.commit + ":" + rel});
  if (shown.exit_status != 0) return std::nullopt;
  return shown.out;
}

std::optional<std::string> path_in_checkout(const MergeBase& mb, const fs::path& path) {
  if (mb.root.empty()) return std::nullopt;
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return std::nullopt;
  const fs::path rel = real.lexically_relative(mb.root);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return rel.generic_string();
}

}  // namespace atlas::gates
