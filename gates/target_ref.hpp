#pragma once
// Which branch a pull request is judged against. The target decides the merge-base, and the
// merge-base decides what the head is compared with: a PR that could name its own target (the
// gate config's "target_branch": "HEAD") turned the timed judgement into an A/A run of its own
// binary and the BASELINE check into a no-op. So the target comes from outside the PR's tree:
// the command line, else the CI's own variables for the merge request, else the default.
// The gate config's `target_branch` is honoured only from the merge-base's copy of the config
// (runs/pr_gate.cpp), never from the PR's.
#include <functional>
#include <string>
#include <vector>

namespace atlas::gates {

struct TargetRef {
  std::vector<std::string> candidates;  ///< refs tried in order; the first that exists is the target
  std::string source;                   ///< where it came from: "--target-branch", "GITHUB_BASE_REF", ..., "default"
};

/// Reads an environment variable ("" when unset); tests pass their own.
using EnvLookup = std::function<std::string(const char* name)>;
std::string process_env(const char* name);

/// `cli` (--target-branch) when given; else $GITHUB_BASE_REF (GitHub Actions, pull_request
/// events) or $CI_MERGE_REQUEST_TARGET_BRANCH_NAME (GitLab merge-request pipelines) as
/// origin/<branch>, falling back to <branch>; else `fallback` ("" = origin/main, then main).
TargetRef choose_target(const std::string& cli, const std::string& fallback, const EnvLookup& env = process_env);

}  // namespace atlas::gates
