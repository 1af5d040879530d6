#include "runs/timed_gate.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "common/temp_dir.hpp"
#include "gates/measured_process.hpp"
#include "records/record_io.hpp"
#include "runs/side_run.hpp"
#include "records/stopping_rule.hpp"
#include "suites/resources.hpp"

namespace atlas::runs {
namespace {

namespace fs = std::filesystem;

}  // namespace

gates::TimedReport run_timed_gate(const gates::GateConfig& cfg, const TimedGateOptions& o, const BaseBinary& base,
                                  bool skip_aa) {
  gates::TimedReport t;
  t.inject_decode_delay_us = o.inject_decode_delay_us;
  t.head_binary = base.head_binary;
  t.base_commit = base.commit;
  t.build_line = base.build_line;
  if (base.path.empty()) {
    t.skipped_reason = base.error;
    t.skipped_is_failure = true;
    return t;
  }
  t.base_binary = base.path;
  if (skip_aa && base.same_as_head && o.inject_decode_delay_us <= 0) {
    t.skipped_reason = "HEAD is the merge-base with no tracked change: nothing changed to time (--timed-only runs the A/A anyway)";
    return t;
  }
  const std::string suite_config = fs::absolute(suites::resolve_resource(cfg.timed.suite_config, "config")).string();
  std::string suite_list;
  for (const auto& s : cfg.timed.suites) suite_list += (suite_list.empty() ? "" : ",") + s;
  // Removed on return, and by a SIGINT / SIGTERM that stops the gate first (common/temp_dir.hpp).
  const TempDir tmp("atlas-gate-timed-");
  const fs::path& tmp_dir = tmp.path();
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const gates::RunSide run_side = [&](gates::Side side, int round) {
    gates::SideRun r;
    const fs::path store = tmp_dir / (std::string(gates::to_string(side)) + "-" + std::to_string(round));
    std::vector<std::string> argv = side_argv(side == gates::Side::base ? t.base_binary : t.head_binary, o.data_dir, suite_list,
                                              suite_config, o.backend, o.model, store);
    argv.insert(argv.end(), {"--threads", std::to_string(cfg.timed.threads)});
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
    if (tty) std::cerr << "\rtimed: round " << round + 1 << " " << gates::to_string(side) << " " << seconds_text(p.wall_s) << "   " << std::flush;
    return r;
  };
  const records::GroupSequential stop = gates::stopping_rule(cfg.timed);
  t.outcome = gates::run_interleaved(gates::interleaved_settings(cfg.timed), run_side, stop);
  if (tty) std::cerr << "\n";
  t.ran = true;
  return t;
}

}  // namespace atlas::runs
