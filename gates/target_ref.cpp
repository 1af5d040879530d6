#include "gates/target_ref.hpp"

#include <cstdlib>

namespace atlas::gates {
namespace {

std::vector<std::string> remote_then_local(const std::string& branch) {
  if (branch.rfind("origin/", 0) == 0) return {branch, branch.substr(7)};
  return {"origin/" + branch, branch};
}

}  // namespace

std::string process_env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

TargetRef choose_target(const std::string& cli, const std::string& fallback, const EnvLookup& env) {
  if (!cli.empty()) return {{cli}, "--target-branch"};
  for (const char* var : {"GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"}) {
    if (const std::string v = env(var); !v.empty()) return {remote_then_local(v), var};
  }
  if (!fallback.empty() && fallback != "origin/main") return {{fallback}, "the merge-base's gate config"};
  return {{"origin/main", "main"}, "default"};
}

}  // namespace atlas::gates
