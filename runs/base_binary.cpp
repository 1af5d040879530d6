#include "runs/base_binary.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "gates/base_build.hpp"
#include "runs/side_run.hpp"

namespace atlas::runs {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

BaseBinary resolve_base_binary(const BaseBinaryOptions& o, const gates::MergeBaseReport& merge_base) {
  BaseBinary b;
  b.head_binary = self_exe();
  if (b.head_binary.empty()) {
    b.error = "cannot find this program's own path (/proc/self/exe)";
    return b;
  }
  if (!o.base_bin.empty()) {
    if (!fs::exists(o.base_bin)) {
      b.error = "--base-bin " + o.base_bin + ": no such file";
      return b;
    }
    b.path = fs::absolute(o.base_bin).string();
    b.build_line = "merge-base build: skipped, base binary given (--base-bin " + o.base_bin + ")";
    return b;
  }
  if (!merge_base.ran) {
    b.error = "no merge-base to build (" + merge_base.skipped_reason + "); give a base binary with --base-bin";
    return b;
  }
  b.commit = merge_base.base_commit;
  if (gates::head_is_clean_base(fs::current_path(), merge_base.base_commit)) {
    b.path = b.head_binary;
    b.same_as_head = true;
    b.build_line = "merge-base build: skipped, the merge-base " + merge_base.base_commit.substr(0, 12) +
                   " is HEAD with no tracked change: this binary runs both sides (an A/A run)";
    return b;
  }
  gates::BaseBuildRequest req;
  req.repo = fs::current_path();
  req.commit = merge_base.base_commit;
  req.head_build_dir = gates::running_build_dir();
  req.cache_dir = o.base_cache_dir.empty() ? gates::default_base_cache_dir(req.head_build_dir) : fs::path(o.base_cache_dir);
  req.jobs = o.build_jobs;
  std::cerr << "gate: building the merge-base " << merge_base.base_commit.substr(0, 12) << " of " << merge_base.target << " in "
            << req.cache_dir.string() << " (cached per commit)\n";
  const gates::BaseBuild built = gates::build_base(req);
  b.build_line = "merge-base build: " + merge_base.base_commit.substr(0, 12) + " " +
                 (built.cached ? "reused from the cache" : built.error.empty() ? "built (ccache)" : "FAILED") + " in " + seconds_text(built.seconds) +
                 " (not part of any judgement's time)";
  if (!built.pruned.empty())
    b.build_line += "; removed " + std::to_string(built.pruned.size()) + " older merge-base build" + (built.pruned.size() == 1 ? "" : "s") +
                    " from the cache (keeping " + std::to_string(req.keep) + ")";
  if (!built.error.empty()) {
    b.error = built.error + "; give a base binary with --base-bin";
    return b;
  }
  b.path = built.binary.string();
  return b;
}

}  // namespace atlas::runs
