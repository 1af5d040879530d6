// atlas-bench gate-resample: the timed judgement's error rates from thousands of replays on
// rounds drawn from recorded gate runs (gates/round_resample.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/build_paths.hpp"
#include "common/exit_code.hpp"
#include "gates/config.hpp"
#include "gates/round_resample.hpp"
#include "tools/atlas-bench/command.hpp"

#include <nlohmann/json.hpp>

namespace atlas::cli {
namespace {

struct ResampleArgs {
  std::vector<std::string> inputs;
  std::string gate = "pr", config, metric = "decode-anatomy/us_per_token_less_runqueue";
  int runs = 5000;
  double planted_pct = 5;
};

int resample(const ResampleArgs& a) {
  namespace fs = std::filesystem;
  const gates::GateConfig cfg = gates::load_gate_config(gates::gate_config_path(a.gate, a.config, build_source_dir()));
  std::vector<gates::RecordedRound> pool;
  int records = 0;
  auto add = [&](const fs::path& p) {
    const auto j = nlohmann::json::parse(read_file(p), nullptr, false);
    if (j.is_discarded()) return;
    try {
      const auto rounds = gates::recorded_rounds(j, a.metric, p.string());
      pool.insert(pool.end(), rounds.begin(), rounds.end());
      ++records;
    } catch (const std::exception&) {
      // not a timed gate record: skipped
    }
  };
  for (const auto& in : a.inputs) {
    if (fs::is_directory(in)) {
      for (const auto& e : fs::recursive_directory_iterator(in))
        if (e.is_regular_file() && e.path().extension() == ".json") add(e.path());
    } else {
      add(in);
    }
  }
  int disturbed = 0;
  for (const auto& r : pool)
    disturbed += std::max(r.base_wait_share, r.head_wait_share) > cfg.timed.max_wait_share ||
                 std::abs(r.base_wait_share - r.head_wait_share) > cfg.timed.max_wait_gap;
  std::printf("gate-resample: %zu rounds of %s from %d timed gate records (%d disturbed by the config's rule), %d replays per kind\n",
              pool.size(), a.metric.c_str(), records, disturbed, a.runs);
  auto line = [&](const char* kind, const gates::ResampleTally& t) {
    std::printf("%-22s exit 1 %5d (%6.2f%%)  exit 2 %5d (%6.2f%%)  exit 0 %5d (%6.2f%%)  mean rounds %.1f  mean time %.1f s\n", kind,
                t.regression, 100.0 * t.regression / t.runs, t.inconclusive, 100.0 * t.inconclusive / t.runs, t.pass,
                100.0 * t.pass / t.runs, t.mean_rounds, t.mean_elapsed_s);
  };
  line("unchanged (A/A)", gates::resample_gate(pool, cfg.timed, a.metric, 0.0, a.runs, 1));
  char kind[64];
  std::snprintf(kind, sizeof kind, "planted +%g%%", a.planted_pct);
  line(kind, gates::resample_gate(pool, cfg.timed, a.metric, a.planted_pct / 100, a.runs, 1000003));
  return to_int(ExitCode::pass);
}

const RegisterCommand reg{Command{
    "gate-resample",
    "The timed gate's error rates from replays on rounds drawn with replacement from recorded gate runs (A/A and planted)",
    [](CLI::App& sub, const GlobalOptions&) -> std::function<int()> {
      auto a = std::make_shared<ResampleArgs>();
      sub.add_option("IN", a->inputs, "Gate records, or folders searched for them (e.g. a proof's store)")->required()->expected(1, -1);
      sub.add_option("--gate", a->gate, "Gate config name")->capture_default_str();
      sub.add_option("--config", a->config, "Gate config file (default: gates/config/<gate>.json)");
      sub.add_option("--metric", a->metric, "Timed metric whose recorded rounds are drawn")->capture_default_str();
      sub.add_option("--runs", a->runs, "Replays per kind")->check(CLI::Range(1, 1000000))->capture_default_str();
      sub.add_option("--planted-pct", a->planted_pct, "Planted slowdown of the head side, percent")->check(CLI::Range(0.0, 100.0))->capture_default_str();
      return [a] { return resample(*a); };
    },
}};

}  // namespace
}  // namespace atlas::cli
