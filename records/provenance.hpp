#pragma once
// Provenance of a run: which code (git), how it was built, on what machine, when.
// Everything a record needs so that `atlas-bench diff` can explain a difference without a
// dashboard (commit, dirty diff hash, compiler and flags, CPU/GPU, run id).
#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "records/record.hpp"

namespace atlas::records {

/// Git state of the checkout at `repo_dir`: `git rev-parse HEAD`, `git rev-parse --abbrev-ref
/// HEAD` ("HEAD" when detached), dirty = `git status --porcelain` lists anything (untracked files
/// included; ignored ones such as .benchmarks/ and build/ are not), diff_sha256 = sha256 of the
/// bytes of `git diff HEAD` when dirty (tracked changes; untracked files mark dirty but are not
/// hashed). Outside a checkout, or without git: commit "unknown", branch "", dirty false; also
/// when `repo_dir` only lies inside another repository that does not track its files (a tree
/// unpacked in someone's checkout is not that checkout's commit).
GitInfo collect_git(const std::filesystem::path& repo_dir);

/// `git rev-parse --verify <rev>^{commit}` in `repo_dir`: the full sha of a commit-ish ("HEAD",
/// "main", a tag), or nullopt when git, the checkout or the revision is missing.
std::optional<std::string> git_rev_parse(const std::filesystem::path& repo_dir, const std::string& rev);

/// Files under `dir` that the enclosing checkout tracks although its ignore rules exclude them
/// (`git ls-files --cached --ignored --exclude-standard`), as paths relative to `dir` with '/'
/// separators. Such a file reached the tree by `git add -f`: under a record store that is
/// ignored (the project's .benchmarks/), it is a file a commit brought, not a run's output. Empty
/// outside a checkout or without git.
std::set<std::string> tracked_though_ignored(const std::filesystem::path& dir);

/// Compiler, flags, build type and CUDA toolkit version this library was built with (CMake
/// compile definitions set in records/CMakeLists.txt; cuda_version "" without CUDA).
BuildInfo build_info();

/// The CPU side of the machine: cpu_model ("model name" in /proc/cpuinfo, else "unknown"),
/// cores (online logical CPUs), memory_bytes (MemTotal in /proc/meminfo), hostname, and
/// machine_class "cpu-<cores>c-<arch>" (arch from uname, e.g. "cpu-2c-x86_64"). GPU fields are
/// left empty for callers that own a GPU to fill (and to replace machine_class, e.g. "h200").
MachineInfo collect_machine();

/// ISO-8601 UTC with second resolution, e.g. "2026-11-29T14:33:20Z".
std::string utc_iso(std::chrono::system_clock::time_point t);
std::string utc_now_iso();

/// Compact UTC stamp for file names, e.g. "20261129T143320Z" (ISO-8601 basic format).
std::string utc_compact(std::chrono::system_clock::time_point t);

/// A new unique run id: compact UTC time plus 12 random hex digits, e.g.
/// "20261129T143320Z-3f9a0c12b4de".
std::string new_run_id();

}  // namespace atlas::records
