#pragma once
// The base side of the timed judgement: the atlas-bench binary of the merge-base commit, built
// once per commit in a cache folder (a detached git worktree `<cache>/<commit12>/src`, built in
// its own `build/` with the head build's generator, build type and CUDA setting, through ccache
// with CCACHE_BASEDIR at the worktree, so the relative paths match the head build's and the
// objects of unchanged files are cache hits). A lock file serialises two gates building the
// same commit. Gates never run a model: this only builds a program (git, cmake).
#include <filesystem>
#include <string>
#include <vector>

namespace atlas::gates {

struct BaseBuildRequest {
  std::filesystem::path repo;         ///< a directory inside the checkout
  std::string commit;                 ///< the merge-base commit (full sha)
  std::filesystem::path cache_dir;    ///< where worktrees and builds are kept
  std::filesystem::path head_build_dir;  ///< the running binary's build tree (its CMakeCache.txt is copied from), may be empty
  int jobs = 0;                       ///< build parallelism (0: online cores)
  int keep = 3;                       ///< merge-base builds kept in the cache (most recently used), >= 1
};

struct BaseBuild {
  std::filesystem::path binary;  ///< empty when the build failed
  bool cached = false;           ///< an earlier build of this commit was reused
  double seconds = 0;            ///< wall time spent here (worktree + configure + build)
  std::string error;             ///< why there is no binary (with the build output's tail)
  std::string log;               ///< what was done, one line
  std::vector<std::string> pruned;  ///< commit folders removed from the cache (older than the kept ones)
};

/// Builds (or finds) the atlas-bench binary of `r.commit`. Never throws for a failed build: the
/// caller reports `error` (the timed judgement is then inconclusive).
BaseBuild build_base(const BaseBuildRequest& r);

/// True when `base_commit` is HEAD of the checkout at `repo` and no tracked file differs from it
/// (untracked files do not count): the running binary was built from the base's own sources, so
/// the gate runs it on both sides instead of building the same commit again (a new user saw 336 s
/// on a fresh clone of main to compare a program with itself).
bool head_is_clean_base(const std::filesystem::path& repo, const std::string& base_commit);

/// Keeps the `keep` most recently used merge-base builds in `cache_dir` (by the mtime of their
/// `built.ok`, which a reuse touches; a folder without one counts by its own mtime) and removes
/// the rest: `git worktree remove --force` (so the checkout forgets them), the folder, its lock
/// file, then `git worktree prune`. `current` (a commit12 folder name) is always kept; a folder
/// whose lock another gate holds is skipped. Returns the folder names removed.
std::vector<std::string> prune_base_cache(const std::filesystem::path& repo, const std::filesystem::path& cache_dir,
                                          int keep, const std::string& current);

/// The default cache folder: `$ATLAS_GATE_CACHE` when set, else `<head_build_dir>/gate-base`
/// when the head build tree is known, else `$XDG_CACHE_HOME` (or ~/.cache)`/atlas-bench/gate-base`.
std::filesystem::path default_base_cache_dir(const std::filesystem::path& head_build_dir);

/// The build tree of the running binary: the nearest parent of /proc/self/exe holding a
/// CMakeCache.txt; empty when there is none.
std::filesystem::path running_build_dir();

/// A value from a CMakeCache.txt ("KEY:TYPE=VALUE"), or "" when absent.
std::string cmake_cache_value(const std::filesystem::path& cache_file, const std::string& key);

}  // namespace atlas::gates
