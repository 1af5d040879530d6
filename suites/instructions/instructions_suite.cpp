#include "suites/instructions/instructions_suite.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/process.hpp"
#include "common/sha256.hpp"
#include "common/temp_dir.hpp"
#include "suites/decode_anatomy/decode_anatomy_suite.hpp"
#include "suites/engine_target.hpp"
#include "suites/error.hpp"
#include "suites/instructions/callgrind_output.hpp"
#include "suites/instructions/instruction_probe.hpp"
#include "suites/metric_util.hpp"

namespace atlas::suites {
namespace fs = std::filesystem;
using records::Better;
using records::MetricKind;

InstructionsConfig InstructionsConfig::from(const SuiteOptions& options) {
  ConfigSection s(options.config, options.config_source);
  s.allow_only({"warmup", "repetitions", "prompt_tokens", "decode_tokens", "valgrind", "probe_executable"});
  InstructionsConfig c;
  c.prompt_tokens = s.get_int("prompt_tokens", c.prompt_tokens, 1);
  c.decode_tokens = s.get_int("decode_tokens", c.decode_tokens, 1);
  c.valgrind = s.get_string("valgrind", c.valgrind);
  c.probe_executable = s.get_string("probe_executable", c.probe_executable);
  return c;
}

nlohmann::json InstructionsConfig::to_json() const {
  return {{"prompt_tokens", prompt_tokens}, {"decode_tokens", decode_tokens}};
}

namespace {

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string k = line.substr(0, colon);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
    if (k != key) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

std::string tail(const std::string& s, std::size_t n) { return s.size() <= n ? s : "..." + s.substr(s.size() - n); }

std::string join(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

std::string json_string(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}
int json_int(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int>() : 0;
}

}  // namespace

nlohmann::json counted_on(const std::string& valgrind_version) {
  std::istringstream flags_in(cpuinfo_field("flags"));
  std::vector<std::string> flags;
  for (std::string f; flags_in >> f;) flags.push_back(f);
  std::sort(flags.begin(), flags.end());
  std::string joined;
  for (const auto& f : flags) joined += f + " ";
  const std::string model = cpuinfo_field("model name");
  return {{"cpu_model", model.empty() ? "unknown" : model},
          {"cpu_flags_sha256", sha256_hex(joined)},
          {"valgrind", valgrind_version},
          {"cache_sim", {{"I1", kSimI1}, {"D1", kSimD1}, {"LL", kSimLL}}}};
}

records::SuiteResult run_instructions_suite(Target& target, const SuiteOptions& options) {
  const InstructionsConfig cfg = InstructionsConfig::from(options);
  auto* engine_target = dynamic_cast<EngineTarget*>(&target);
  if (engine_target == nullptr) {
    throw SuiteError("instructions suite: target " + target.name() +
                     " is not the in-process engine (instructions are counted in a child process under valgrind)");
  }
  const nlohmann::json prov = engine_target->provenance();
  const nlohmann::json& eo = prov["options"];
  const nlohmann::json& backend = eo["backend"];
  if (json_string(backend, "name") != "cpu") {
    // A GPU gate runs the same suite list: its CPU cost is not what valgrind can count (the
    // GPU side has its own counted metrics, decode-anatomy's launches and syncs). No metrics,
    // and the reason in details and on the progress line.
    records::SuiteResult skipped;
    skipped.name = "instructions";
    skipped.config = cfg.to_json();
    skipped.details["skipped"] = "backend '" + json_string(backend, "name") +
                                 "': instructions are counted for the CPU backend only";
    Progress& p = options.progress_or_null();
    p.begin("instructions", 0);
    p.end("skipped: " + skipped.details["skipped"].get<std::string>());
    return skipped;
  }

  const ProcessResult version = run_process({cfg.valgrind, "--version"}, {});
  if (version.exit_status != 0) {
    throw SuiteError("instructions suite: '" + cfg.valgrind + " --version' failed (" + tail(version.err, 200) +
                     "): install valgrind (tools/install-deps.sh does)");
  }
  std::string valgrind_version = version.out;
  while (!valgrind_version.empty() && (valgrind_version.back() == '\n' || valgrind_version.back() == ' '))
    valgrind_version.pop_back();

  std::string exe = cfg.probe_executable;
  if (exe.empty()) {
    std::error_code ec;
    exe = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) throw SuiteError("instructions suite: cannot resolve /proc/self/exe: " + ec.message());
  }

  const TempDir dir("atlas-callgrind-");
  const std::string out_file = (dir.path() / "callgrind.out").string();
  // What the counts must not depend on, pinned (the gate compares a merge-base build in its cache
  // folder with this build, in one job): the probe starts from a symlink of the same path length
  // whichever binary it is, with a fixed environment, so argv and the environment put the stack
  // at the same place and alignment-dependent string and copy loops take the same paths.
  const fs::path probe = dir.path() / "probe";
  std::error_code link_ec;
  fs::create_symlink(fs::absolute(exe), probe, link_ec);
  if (link_ec) throw SuiteError("instructions suite: cannot link " + probe.string() + " to " + exe + ": " + link_ec.message());
  std::vector<std::string> argv = {cfg.valgrind, "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no", "--cache-sim=yes",
                                   std::string("--I1=") + kSimI1, std::string("--D1=") + kSimD1,
                                   std::string("--LL=") + kSimLL, "--callgrind-out-file=" + out_file,
                                   probe.string(), "instruction-probe",
                                   "--model", json_string(eo, "model"),
                                   "--prompt-tokens", std::to_string(cfg.prompt_tokens),
                                   "--decode-tokens", std::to_string(cfg.decode_tokens),
                                   "--seed", std::to_string(options.seed),
                                   "--max-seq-len", std::to_string(json_int(eo, "max_seq_len")),
                                   "--inject-decode-delay-us", std::to_string(json_int(backend, "inject_decode_delay_us")),
                                   "--inject-decode-work", std::to_string(json_int(backend, "inject_decode_work"))};
  if (const std::string tok = json_string(eo, "tokenizer"); !tok.empty()) {
    argv.push_back("--tokenizer");
    argv.push_back(tok);
  }
  Progress& progress = options.progress_or_null();
  progress.begin("instructions", 1);
  ProcessOptions pinned;
  pinned.clear_env = true;
  pinned.env_overrides = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LC_ALL", "C"}};
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) pinned.env_overrides["TMPDIR"] = tmp;
  const ProcessResult run = run_process_with(argv, pinned);
  progress.step("prefill + decode under callgrind");
  if (run.exit_status != 0) {
    throw SuiteError("instructions suite: the probe under valgrind failed (exit " + std::to_string(run.exit_status) +
                     "): " + join(argv) + "\n" + tail(run.err, 1500));
  }
  const auto last_line = run.out.find_last_of('{');
  nlohmann::json report_json;
  try {
    report_json = nlohmann::json::parse(last_line == std::string::npos ? run.out : run.out.substr(last_line));
  } catch (const nlohmann::json::exception& e) {
    throw SuiteError("instructions suite: the probe printed no JSON report (" + std::string(e.what()) + "): " +
                     tail(run.out, 300));
  }
  const ProbeReport report = ProbeReport::from_json(report_json);
  if (!report.under_valgrind) throw SuiteError("instructions suite: the probe did not run under valgrind");

  const auto dumps = read_callgrind_dumps(dir.path(), "callgrind.out");
  const CallgrindDump& prefill = dump_for_region(dumps, "prefill");
  const CallgrindDump& decode = dump_for_region(dumps, "decode");

  records::SuiteResult r;
  r.name = "instructions";
  r.config = cfg.to_json();
  r.config["counted_on"] = counted_on(valgrind_version);
  struct Region {
    const char* name;
    const CallgrindDump* dump;
    int tokens;
  };
  for (const Region& region : {Region{"decode", &decode, report.decoded_tokens}, Region{"prefill", &prefill, report.prefilled_tokens}}) {
    const double n = region.tokens;
    const std::string per = std::string("_per_") + region.name + "_token";
    const double ir = static_cast<double>(event_total(*region.dump, "Ir"));
    const double d1 = static_cast<double>(event_total(*region.dump, "D1mr") + event_total(*region.dump, "D1mw"));
    const double ll = static_cast<double>(event_total(*region.dump, "DLmr") + event_total(*region.dump, "DLmw"));
    metric(r, "instructions" + per, "instructions", Better::lower, MetricKind::counted,
           std::string("guest instructions per ") + region.name + " token (callgrind Ir, one thread)")
        .samples.push_back(ir / n);
    metric(r, "d1_misses" + per, "misses", Better::lower, MetricKind::counted,
           std::string("simulated L1 data misses (reads + writes) per ") + region.name + " token")
        .samples.push_back(d1 / n);
    metric(r, "ll_misses" + per, "misses", Better::lower, MetricKind::counted,
           std::string("simulated last-level data misses (reads + writes) per ") + region.name + " token")
        .samples.push_back(ll / n);
    r.details["regions"][region.name] = {{"tokens", region.tokens}, {"totals", region.dump->totals}};
  }
  metric(r, "output_fingerprint", "fnv1a32", Better::lower, MetricKind::counted,
         "FNV-1a 32 of the decode region's ids: the counted work generated the same tokens")
      .samples.push_back(static_cast<double>(output_fingerprint(report.output_ids)));
  r.details["command"] = argv;
  progress.end("instructions counted");
  return r;
}

}  // namespace atlas::suites
