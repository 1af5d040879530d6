#include "runs/timed_gate.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "gates/base_build.hpp"
#include "gates/measured_process.hpp"
#include "records/record_io.hpp"
#include "records/stopping_rule.hpp"
#include "suites/resources.hpp"

namespace atlas::runs {
namespace {

namespace fs = std::filesystem;

std::string fmt_s(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

/// The record path the `run` command prints ("record: <path>").
std::string record_path_from(const std::string& out) {
  std::istringstream in(out);
  std::string line, path;
  while (std::getline(in, line))
    if (line.rfind("record: ", 0) == 0) path = line.substr(8);
  return path;
}

std::string last_lines(const std::string& s, std::size_t n = 600) {
  std::string t = s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t.size() <= n ? t : "..." + t.substr(t.size() - n);
}

}  // namespace

gates::TimedReport run_timed_gate(const gates::GateConfig& cfg, const TimedGateOptions& o,
                                  const gates::MergeBaseReport& merge_base) {
  gates::TimedReport t;
  t.inject_decode_delay_us = o.inject_decode_delay_us;
  t.head_binary = self_exe();
  if (t.head_binary.empty()) {
    t.skipped_reason = "cannot find this program's own path (/proc/self/exe)";
    t.skipped_is_failure = true;
    return t;
  }
  if (!o.base_bin.empty()) {
    if (!fs::exists(o.base_bin)) {
      t.skipped_reason = "--base-bin " + o.base_bin + ": no such file";
      t.skipped_is_failure = true;
      return t;
    }
    t.base_binary = fs::absolute(o.base_bin).string();
    t.build_line = "merge-base build: skipped, base binary given (--base-bin " + o.base_bin + ")";
  } else {
    if (!merge_base.ran) {
      t.skipped_reason = "no merge-base to build (" + merge_base.skipped_reason +
                         "); give a base binary with --base-bin, or --no-timed";
      t.skipped_is_failure = true;
      return t;
    }
    t.base_commit = merge_base.base_commit;
  }
  if (o.base_bin.empty() && gates::head_is_clean_base(fs::current_path(), merge_base.base_commit)) {
    t.base_binary = t.head_binary;
    t.build_line = "merge-base build: skipped, the merge-base " + merge_base.base_commit.substr(0, 12) +
                   " is HEAD with no tracked change: this binary runs both sides (an A/A run)";
  } else if (o.base_bin.empty()) {
    gates::BaseBuildRequest req;
    req.repo = fs::current_path();
    req.commit = merge_base.base_commit;
    req.head_build_dir = gates::running_build_dir();
    req.cache_dir = o.base_cache_dir.empty() ? gates::default_base_cache_dir(req.head_build_dir) : fs::path(o.base_cache_dir);
    req.jobs = o.build_jobs;
    std::cerr << "timed: building the merge-base " << merge_base.base_commit.substr(0, 12) << " of " << merge_base.target
              << " in " << req.cache_dir.string() << " (cached per commit)\n";
    const gates::BaseBuild b = gates::build_base(req);
    t.build_line = "merge-base build: " + merge_base.base_commit.substr(0, 12) + " " +
                   (b.cached ? "reused from the cache" : b.error.empty() ? "built (ccache)" : "FAILED") + " in " +
                   fmt_s(b.seconds) + " (not part of the judgement's time)";
    if (!b.pruned.empty())
      t.build_line += "; removed " + std::to_string(b.pruned.size()) + " older merge-base build" +
                      (b.pruned.size() == 1 ? "" : "s") + " from the cache (keeping " + std::to_string(req.keep) + ")";
    if (!b.error.empty()) {
      t.skipped_reason = b.error + "; give a base binary with --base-bin";
      t.skipped_is_failure = true;
      return t;
    }
    t.base_binary = b.binary.string();
  }
  std::cerr << t.build_line << "\n";
  const std::string suite_config = fs::absolute(suites::resolve_resource(cfg.timed.suite_config, "config")).string();
  std::string suite_list;
  for (const auto& s : cfg.timed.suites) suite_list += (suite_list.empty() ? "" : ",") + s;
  char tmpl[] = "/tmp/atlas-gate-timed-XXXXXX";
  const char* tmp = ::mkdtemp(tmpl);
  if (tmp == nullptr) {
    t.skipped_reason = "cannot create a temporary folder for the side records";
    t.skipped_is_failure = true;
    return t;
  }
  const fs::path tmp_dir = tmp;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const gates::RunSide run_side = [&](gates::Side side, int round) {
    gates::SideRun r;
    const fs::path store = tmp_dir / (std::string(gates::to_string(side)) + "-" + std::to_string(round));
    std::vector<std::string> argv = {side == gates::Side::base ? t.base_binary : t.head_binary,
                                     "--data-dir", o.data_dir, "run", "--suite", suite_list, "--config", suite_config,
                                     "--backend", o.backend, "--threads", std::to_string(cfg.timed.threads),
                                     "--out-dir", store.string()};
    if (!o.model.empty()) argv.insert(argv.end(), {"--model", o.model});
    if (side == gates::Side::head && o.inject_decode_delay_us > 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", o.inject_decode_delay_us);
      argv.insert(argv.end(), {"--inject-decode-delay-us", buf});
    }
    const gates::MeasuredProcess p = gates::run_measured(argv, {}, {{"ATLAS_THREADS", ""}});
    r.wall_s = p.wall_s;
    r.run_queue_wait_s = p.run_queue_wait_s;
    r.steal_share = p.steal_share;
    if (p.exit_status != 0) {
      r.failure = std::string(gates::to_string(side)) + " binary exited " + std::to_string(p.exit_status) + ": " +
                  last_lines(p.err);
    } else {
      const std::string path = record_path_from(p.out);
      try {
        if (path.empty()) throw std::runtime_error("it printed no 'record: <path>' line");
        r.record = records::read_record(path);
      } catch (const std::exception& e) {
        r.failure = std::string("reading the ") + gates::to_string(side) + " record failed: " + e.what();
      }
    }
    std::error_code ec;
    fs::remove_all(store, ec);
    if (tty) std::cerr << "\rtimed: round " << round + 1 << " " << gates::to_string(side) << " " << fmt_s(p.wall_s) << "   " << std::flush;
    return r;
  };
  const records::GroupSequential stop = gates::stopping_rule(cfg.timed);
  t.outcome = gates::run_interleaved(gates::interleaved_settings(cfg.timed), run_side, stop);
  if (tty) std::cerr << "\n";
  std::error_code ec;
  fs::remove_all(tmp_dir, ec);
  t.ran = true;
  return t;
}

}  // namespace atlas::runs
