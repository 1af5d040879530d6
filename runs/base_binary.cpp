#include "runs/base_binary.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "gates/base_build.hpp"
#include "gates/error.hpp"
#include "gates/process.hpp"
#include "runs/side_run.hpp"

namespace atlas::runs {
namespace {

namespace fs = std::filesystem;

}  // namespace

GivenBase identify_given_base(const std::string& path) {
  GivenBase g;
  g.path = path;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw gates::GateError("--base-bin " + path + ": no such file (the base side's binary, built from the merge-base)");
  const gates::ProcessResult r = gates::run_process({fs::absolute(path).string(), "--version"}, fs::current_path());
  if (r.exit_status != 0)
    throw gates::GateError("--base-bin " + path + ": `" + path + " --version` failed (exit " + std::to_string(r.exit_status) +
                           (r.err.empty() ? std::string() : ": " + r.err.substr(0, r.err.find('\n'))) +
                           "), so it cannot say which commit it was built from");
  g.version_output = r.out.substr(0, std::min(r.out.find('\n'), std::size_t{200}));
  g.reported = parse_build_commit(r.out);
  return g;
}

void require_merge_base_build(GivenBase& g, const std::string& merge_base, const std::string& target) {
  if (merge_base.empty()) return;
  const std::string flag = "--base-bin " + g.path;
  const std::string mb = "the merge-base " + merge_base + " of " + target;
  const std::string fix = ": give the merge-base's build (leave out --base-bin and the gate builds it)";
  if (!g.reported)
    throw gates::GateError(flag + " does not say which commit it was built from (its --version printed \"" +
                           g.version_output + "\"), so nothing ties it to " + mb + fix);
  if (g.reported->commit != merge_base)
    throw gates::GateError(flag + " was built from commit " + g.reported->commit + ", not " + mb +
                           " (a binary of another commit, the PR's own included, would not judge the change against "
                           "its base)" + fix);
  if (g.reported->dirty)
    throw gates::GateError(flag + " was built from " + merge_base +
                           " with uncommitted changes (dirty tree), so it is not the merge-base's code" + fix);
  g.checked_against = merge_base;
}

std::string given_base_text(const GivenBase& g) {
  if (!g.reported) return "its --version names no commit: \"" + g.version_output + "\"";
  return "built from " + g.reported->commit.substr(0, 12) + (g.reported->dirty ? " (dirty tree)" : " (clean tree)") +
         (g.checked_against.empty() ? ", not checked: no merge-base" : ", the merge-base");
}

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
    b.build_line = "merge-base build: skipped, base binary given (--base-bin " + o.base_bin +
                   (o.base_bin_identity.empty() ? std::string() : ", " + o.base_bin_identity) + ")";
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
