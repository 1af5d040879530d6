// End to end, as CI runs it: the real atlas-serve binary on stories260K, then the real
// atlas-bench running the ttft, agentic and bfcl suites with --endpoint against it and, for
// comparison, in-process on the same model. The records must be comparable: the same metric
// names, the transport and the /v1/models answer recorded, one sample per request asked for.
// Binaries from $ATLAS_SERVE_EXE and $ATLAS_BENCH_EXE (set by tests/CMakeLists.txt).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/built_exe.hpp"
#include "tests/run_process.hpp"
#include "tests/serve_process.hpp"
#include "tests/test_data.hpp"
#include "tests/skip.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct BenchRun {
  int rc = -1;
  std::string out;  ///< stdout and stderr
  json record;      ///< the record the run wrote ("record: PATH" on stdout)
};

/// Runs atlas-bench with `args` (already quoted), expects exit status `rc` (2: the run is
/// invalid, inconclusive, its record still written) and loads the record it wrote.
BenchRun bench(const std::string& exe, const std::string& args, int expect_rc = 0) {
  BenchRun r;
  std::string cmd = "'";
  cmd += exe;
  cmd += "' ";
  cmd += args;
  cmd += " 2>&1";
  const atlas::test::ShellResult run = atlas::test::run_shell(cmd);
  r.rc = run.rc;
  r.out = run.out;
  INFO(r.out);
  REQUIRE(r.rc == expect_rc);
  const auto at = r.out.rfind("\nrecord: ");
  REQUIRE(at != std::string::npos);
  const auto path = r.out.substr(at + 9, r.out.find('\n', at + 9) - at - 9);
  std::ifstream in(path);
  REQUIRE(in.good());
  r.record = json::parse(in);
  return r;
}

std::set<std::string> metric_names(const json& suite) {
  std::set<std::string> names;
  for (const auto& [name, m] : suite.at("metrics").items()) names.insert(name);
  return names;
}

std::size_t samples(const json& suite, const std::string& metric) {
  return suite.at("metrics").at(metric).at("samples").size();
}

/// Metrics made only of inter-token gaps. Over HTTP, tokens that arrive in the first socket read
/// of a request have no gap of their own (counted in details.first_read_extra_tokens); on a loaded
/// box every request of a suite can get all its tokens in one read, and these metrics then have
/// no samples and are absent from the record (seen in CI-like runs beside a build).
const std::set<std::string> kGapMetrics = {"itl_ms", "tpot_ms", "decode_tok_s"};

/// Samples of `metric`, 0 when the record has none (only gap metrics may be absent).
std::size_t samples_or_none(const json& suite, const std::string& metric) {
  return suite.at("metrics").contains(metric) ? samples(suite, metric) : 0;
}

/// Only in process: the run-queue wait of the measuring process is known for its own requests,
/// not for a server's (suites/run_queue_wait.hpp), so the wait-corrected times exist only there.
bool in_process_only(const std::string& name) { return name.find("_less_runqueue") != std::string::npos; }

/// The in-process suite's metric names, less the gap metrics the HTTP record has no samples of
/// and the wait-corrected ones.
std::set<std::string> expected_http_names(const json& local, const json& remote) {
  std::set<std::string> want = metric_names(local);
  const std::set<std::string> got = metric_names(remote);
  for (const auto& g : kGapMetrics)
    if (!got.count(g)) want.erase(g);
  std::erase_if(want, [](const std::string& n) { return in_process_only(n); });
  return want;
}

}  // namespace

TEST_CASE("atlas-bench run --endpoint against the atlas-serve binary: records comparable with the in-process run") {
  const std::string serve_exe = atlas::test::atlas_serve_exe();
  if (serve_exe.empty()) return;
  const std::string bench_env = atlas::test::bench_exe_or_skip();
  if (bench_env.empty()) return;
  const std::string bench_exe = bench_env;
  atlas::test::require_data(atlas::test::stories_bin());
  atlas::test::require_data(atlas::test::data_dir() / "bfcl");
  const fs::path dir = atlas::test::scratch_dir("run_endpoint_e2e");
  constexpr int kReps = 2;
  // The PR gate's suite configs, two measured repetitions each; BFCL in prompt mode (bfcl-pr)
  // and in native function-calling mode, 2 entries per category.
  const json prompt_cfg = {{"name", "e2e-prompt"},
                           {"seed", 1},
                           {"suites",
                            {{"ttft", {{"lengths", {16, 64, 128}}, {"decode_tokens", 8}, {"warm", true}}},
                             {"agentic", {{"traces", {"coding-agent", "retrieval-agent"}}, {"think_time_scale", 0}}},
                             {"bfcl", {{"config", "bfcl-pr"}, {"per_category", 2}}}}}};
  const json fc_cfg = {{"name", "e2e-fc"},
                       {"seed", 1},
                       {"suites", {{"bfcl", {{"config", "bfcl-pr"}, {"per_category", 2}, {"mode", "native_fc"}}}}}};
  std::ofstream(dir / "prompt.json") << prompt_cfg.dump(2);
  std::ofstream(dir / "fc.json") << fc_cfg.dump(2);

  const std::string model = " --model '" + atlas::test::stories_bin().string() + "' --tokenizer '" +
                            atlas::test::stories_tok().string() + "'";
  const std::string common = model + " --warmup 0 --repetitions " + std::to_string(kReps);
  const std::string run = "--data-dir '" + atlas::test::data_dir().string() + "' run";

  // The server and the client read the same key from the same variable: every request of the
  // run is authenticated end to end (a missing or wrong key would be 401 and fail the run). The
  // key must never be recorded.
  ::setenv("ATLAS_E2E_API_KEY", "e2e-secret-key", 1);
  atlas::test::ServeProcess server(serve_exe, {"--model", atlas::test::stories_bin().string(), "--tokenizer",
                                               atlas::test::stories_tok().string(), "--served-model-name", "stories",
                                               "--threads", "1", "--api-key-env", "ATLAS_E2E_API_KEY"});
  const std::string endpoint = " --endpoint " + server.url + " --served-model stories --api-key-env ATLAS_E2E_API_KEY";

  const std::string suites = " --suite ttft,agentic,bfcl --config '" + (dir / "prompt.json").string() + "'";
  const BenchRun local = bench(bench_exe, run + suites + common + " --threads 1 --out-dir '" + (dir / "local").string() + "'");
  const BenchRun remote = bench(bench_exe, run + suites + common + endpoint + " --out-dir '" + (dir / "remote").string() + "'");
  const std::string fc = " --suite bfcl --config '" + (dir / "fc.json").string() + "'";
  // bfcl alone: no --warmup/--repetitions (it scores each entry once; they are a usage error).
  const BenchRun local_fc = bench(bench_exe, run + fc + model + " --threads 1 --out-dir '" + (dir / "local-fc").string() + "'");
  // Native FC over HTTP: most prompts exceed the server's context (below); failed entries make
  // the run invalid: exit 2 (inconclusive; 3 is for usage errors), its record kept.
  const BenchRun remote_fc =
      bench(bench_exe, run + fc + model + endpoint + " --out-dir '" + (dir / "remote-fc").string() + "'", 2);
  CHECK(remote_fc.out.find("atlas-bench run: the run is invalid (exit 2, inconclusive): suite bfcl: ") != std::string::npos);

  const json& L = local.record;
  const json& R = remote.record;
  CHECK(L["valid"] == true);
  CHECK(R["valid"] == true);

  // Provenance: in-process has no endpoint; the endpoint record names the transport, the URL,
  // the served model, and what GET /v1/models answered. The API key's variable is recorded,
  // its value never.
  CHECK(L["endpoint"].is_null());
  REQUIRE(R["endpoint"].is_object());
  CHECK(R["endpoint"]["transport"] == "http+sse");
  CHECK(R["endpoint"]["url"] == server.url);
  CHECK(R["endpoint"]["served_model"] == "stories");
  CHECK(R["endpoint"]["api_key_env"] == "ATLAS_E2E_API_KEY");
  CHECK(R["endpoint"]["models"]["data"][0]["id"] == "stories");
  CHECK(R["endpoint"]["models"]["data"][0]["max_model_len"] == 512);
  CHECK(R["endpoint"]["context_length_source"] == "max_model_len");
  CHECK(R["endpoint"]["server_kind"] == "atlas-serve");
  // Provenance is taken after the suites ran: it says what the resets did (atlas-serve has them).
  CHECK(R["endpoint"]["reset_prefix_cache"] == "ok");
  CHECK(R["endpoint"]["reset_prefix_cache_calls"].get<int>() > 0);
  CHECK(R["endpoint"]["reset_prefix_cache_skipped"] == 0);
  CHECK(R["config"]["target_name"] == "endpoint:" + server.url);
  CHECK(R.dump().find("e2e-secret-key") == std::string::npos);

  for (const char* s : {"ttft", "agentic", "bfcl"}) {
    INFO("suite " << std::string(s));
    REQUIRE(L["suites"].contains(s));
    REQUIRE(R["suites"].contains(s));
    CHECK(expected_http_names(L["suites"][s], R["suites"][s]) == metric_names(R["suites"][s]));
  }

  // TTFT: kReps samples per length and variant on both transports; positive, finite times.
  const json& lt = L["suites"]["ttft"];
  const json& rt = R["suites"]["ttft"];
  for (int len : {16, 64, 128}) {
    const std::string k = "len=" + std::to_string(len);
    for (const std::string m : {"ttft_ms/cold/", "ttft_ms/warm/", "prefill_tok_s/cold/", "cached_tokens/warm/"}) {
      INFO(m << k);
      CHECK(samples(lt, m + k) == kReps);
      CHECK(samples(rt, m + k) == kReps);
    }
    for (const std::string m : {"ttft_ms/cold/", "ttft_ms/warm/"}) {
      for (const auto& v : rt["metrics"][m + k]["samples"]) {
        CHECK(std::isfinite(v.get<double>()));
        CHECK(v.get<double>() > 0.0);
      }
    }
    // The server got the suite's exact prompt (token ids), so it reuses exactly what the
    // engine reuses: all but the last prompt token.
    CHECK(rt["metrics"]["cached_tokens/warm/" + k]["samples"] == lt["metrics"]["cached_tokens/warm/" + k]["samples"]);
    CHECK(rt["metrics"]["cached_tokens/warm/" + k]["samples"][0] == len - 1);
  }
  // 3 lengths x 2 variants x kReps requests, each with 8 decode gaps after the first token;
  // over HTTP, tokens that came in the first read have no gap of their own and are counted.
  CHECK(samples(lt, "itl_ms") == 3 * 2 * kReps * 8);
  CHECK(samples_or_none(rt, "itl_ms") + rt["details"].value("first_read_extra_tokens", 0) == 3 * 2 * kReps * 8);
  // Cold is cold: atlas-serve's reset works, so the prompts are the engine's, none served from cache.
  CHECK(rt["details"]["cold_salted_requests"] == 0);
  CHECK(rt["details"]["cold_reissued"] == 0);
  // One TTFB and E2E sample per request; over HTTP the first byte (headers) precedes the first
  // token, and the last token comes after it.
  CHECK(samples(rt, "ttfb_ms") == 3 * 2 * kReps);
  CHECK(samples(rt, "e2e_ms") == 3 * 2 * kReps);
  for (const char* m : {"ttfb_ms", "e2e_ms", "tpot_ms", "itl_ms"}) {
    if (!rt["metrics"].contains(m)) continue;  // a gap metric with no samples (kGapMetrics)
    for (const auto& v : rt["metrics"][m]["samples"]) {
      INFO(m);
      CHECK(std::isfinite(v.get<double>()));
      CHECK(v.get<double>() >= 0.0);
    }
  }
  CHECK(rt["metrics"]["ttfb_ms"]["summary"]["max"].get<double>() > 0.0);

  // Agentic (api "completions", the default): the server gets each turn as the trace's token
  // ids and lists the ids it generated (return_token_ids), so every turn's prompt is the
  // engine's and the reuse figures are the in-process ones, turn by turn (before, 56 and 64
  // tokens of false shortfall came from re-encoding the server's text).
  const json& la = L["suites"]["agentic"];
  const json& ra = R["suites"]["agentic"];
  for (const auto& [name, m] : ra["metrics"].items()) {
    if (name.find("/ttft_ms/turn=") == std::string::npos) continue;
    INFO(name);
    CHECK(m["samples"].size() == kReps);
    for (const auto& v : m["samples"]) {
      CHECK(std::isfinite(v.get<double>()));
      CHECK(v.get<double>() > 0.0);
    }
    CHECK(samples(la, name) == kReps);
  }
  CHECK(samples(ra, "coding-agent/session_wall_ms") == kReps);
  int reuse_metrics = 0;
  for (const auto& [name, m] : la["metrics"].items()) {
    if (name.find("/reused_tokens/turn=") == std::string::npos && name.find("/prefilled_tokens/turn=") == std::string::npos &&
        name.find("reuse_shortfall_tokens") == std::string::npos) {
      continue;
    }
    INFO(name);
    CHECK(ra["metrics"][name]["samples"] == m["samples"]);
    ++reuse_metrics;
  }
  CHECK(reuse_metrics > 10);
  CHECK(ra["metrics"]["reuse_shortfall_tokens"]["samples"] == json::array({0, 0}));
  CHECK(ra["details"]["turns_without_exact_expectation"] == 0);

  // BFCL, prompt mode: every stories260K prompt is over its 512-token context, so both
  // transports run the same truncated prompt (the endpoint as token ids through
  // /v1/completions) greedily: the verdicts, entry by entry, are the same. 5 categories x 2
  // entries, none failed.
  {
    const json& lb = L["suites"]["bfcl"];
    const json& rb = R["suites"]["bfcl"];
    CHECK(samples(rb, "accuracy.overall") == 10);
    CHECK(rb["metrics"]["entries_failed"]["samples"][0] == 0);
    CHECK(rb["metrics"]["entries_truncated"]["samples"][0] == 10);
    for (const auto& [name, m] : lb["metrics"].items()) {
      INFO(name);
      if (name.rfind("accuracy.", 0) == 0) CHECK(rb["metrics"][name]["samples"] == m["samples"]);
    }
  }
  // BFCL, native function calling: here the prompts legitimately differ. The engine has no
  // chat template and runs the question alone (it fits, nothing is truncated); the server
  // renders the tools into the prompt, as a function-calling server must, and most prompts then
  // exceed 512 tokens: those entries fail with the server's context_length_exceeded (HTTP 400)
  // and are counted, not scored; the rest are scored from the tool calls or text.
  {
    const json& lb = local_fc.record["suites"]["bfcl"];
    const json& rb = remote_fc.record["suites"]["bfcl"];
    CHECK(rb["config"]["mode"] == "native_fc");
    CHECK(remote_fc.record["valid"] == false);
    CHECK(remote_fc.record["invalid_reason"].get<std::string>().find("suite bfcl: ") == 0);
    CHECK(lb["metrics"]["entries_failed"]["samples"][0] == 0);
    CHECK(samples(lb, "accuracy.overall") == 10);
    const auto failed = rb["metrics"]["entries_failed"]["samples"][0].get<double>();
    CHECK(failed + static_cast<double>(samples(rb, "accuracy.overall")) == 10.0);
    CHECK(samples(rb, "accuracy.overall") >= 1);  // simple_python_1's one short tool fits
    int context_errors = 0;
    for (const auto& row : rb["details"]["entries"]) {
      if (row.value("failed", false)) {
        INFO(row.dump());
        CHECK(row["error"].get<std::string>().rfind("HTTP 400: {\"error\":{\"code\":\"context_length_exceeded\"", 0) == 0);
        ++context_errors;
      }
    }
    CHECK(context_errors == static_cast<int>(failed));
    for (const auto& [name, m] : lb["metrics"].items()) {
      INFO(name);  // accuracy.<category> exists on both sides even when no entry was scored
      // The one or two scored entries may answer with a tool call alone, streamed as one delta
      // when it is complete: every token in one read has no decode rate (latency.hpp), and the
      // metric is left out rather than given a 0 or unbounded sample.
      if (name == "decode_tokens_per_s") continue;
      CHECK(rb["metrics"].contains(name));
    }
  }

  // SIGTERM: the server drains and exits 0. It answered every request once: 3 lengths x
  // (cold + warm) x kReps TTFT requests, one per agentic turn and repetition, 10 + the scored
  // native-FC BFCL entries; its bad requests are exactly the native-FC entries over its context.
  std::size_t agentic_turns = 0;
  for (const auto& [name, m] : ra["metrics"].items()) agentic_turns += name.find("/ttft_ms/turn=") != std::string::npos;
  const std::size_t fc_scored = samples(remote_fc.record["suites"]["bfcl"], "accuracy.overall");
  const auto fc_failed = remote_fc.record["suites"]["bfcl"]["metrics"]["entries_failed"]["samples"][0].get<int>();
  const std::size_t completed = 3 * 2 * kReps + agentic_turns * kReps + 10 + fc_scored;
  CHECK(server.stop() == 0);
  INFO(server.child.captured);
  CHECK(server.child.captured.find("SIGTERM: draining") != std::string::npos);
  CHECK(server.child.captured.find("stopped (" + std::to_string(completed) + " completed, 0 rejected, " +
                                   std::to_string(fc_failed) + " bad requests, 0 failed)") != std::string::npos);
}

TEST_CASE("atlas-bench run --concurrency against the atlas-serve binary: one record with every level; no server, no load") {
  const std::string serve_exe = atlas::test::atlas_serve_exe();
  if (serve_exe.empty()) return;
  const std::string bench_env = atlas::test::bench_exe_or_skip();
  if (bench_env.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const fs::path dir = atlas::test::scratch_dir("run_load_cli");
  const std::string model = " --model '" + atlas::test::stories_bin().string() + "' --tokenizer '" +
                            atlas::test::stories_tok().string() + "'";
  atlas::test::ServeProcess server(serve_exe, {"--model", atlas::test::stories_bin().string(), "--tokenizer",
                                               atlas::test::stories_tok().string(), "--threads", "1"});
  const BenchRun r = bench(bench_env, "run --endpoint " + server.url + model +
                                          " --concurrency 1,2 --num-prompts 3 --input-len 16 --output-len 4"
                                          " --goodput ttft_ms:60000 --max-send-lag-ms 1000 --out-dir '" +
                                          (dir / "rec").string() + "'");
  const json& load = r.record["suites"]["load"];
  CHECK(r.record["valid"] == true);
  CHECK(load["config"]["concurrency"] == json::array({1, 2}));
  REQUIRE(load["details"]["levels"].size() == 2);
  for (const char* L : {"concurrency=1", "concurrency=2"}) {
    INFO(L);
    const std::string p = std::string(L) + "/";
    CHECK(samples(load, p + "ttft_ms") == 3);
    CHECK(samples(load, p + "e2e_ms") == 3);
    CHECK(load["metrics"][p + "request_throughput"]["samples"][0].get<double>() > 0);
    CHECK(load["metrics"][p + "goodput_req_s"]["samples"][0] == load["metrics"][p + "request_throughput"]["samples"][0]);
    CHECK(load["metrics"][p + "failed_requests"]["samples"][0] == 0);
  }
  // The server counted what the load generator asked for: 2 levels x 3 requests x 4 tokens.
  for (const auto& lvl : load["details"]["levels"]) CHECK(lvl["output_length_mismatches"] == 0);

  // A client that falls behind its schedule measured itself: the level is invalid and the run
  // exits 2 (inconclusive) with the reason printed and recorded, never 3 (usage error).
  // --max-send-lag-ms 0: a closed loop always has some lag.
  const BenchRun lagging = bench(bench_env, "run --endpoint " + server.url + model +
                                                " --concurrency 2 --num-prompts 3 --input-len 16 --output-len 4"
                                                " --max-send-lag-ms 0 --out-dir '" + (dir / "lag").string() + "'",
                                 2);
  CHECK(lagging.record["valid"] == false);
  CHECK(lagging.record["invalid_reason"].get<std::string>().find("suite load: concurrency=2: the client fell behind its schedule") == 0);
  CHECK(lagging.out.find("the run is invalid (exit 2, inconclusive): suite load: concurrency=2: the client fell behind") !=
        std::string::npos);

  // An open loop with a cap and a warm-up: per-request rows, the realized rate beside the
  // requested one, total token throughput.
  const BenchRun open = bench(bench_env, "run --endpoint " + server.url + model +
                                             " --rate 40 --num-prompts 4 --input-len 16 --output-len 4 --max-concurrency 1"
                                             " --warmup-requests 1 --max-send-lag-ms 1000 --out-dir '" + (dir / "open").string() + "'");
  const json& lvl = open.record["suites"]["load"]["details"]["levels"][0];
  CHECK(open.record["valid"] == true);
  CHECK(lvl["request_rows"].size() == 4);
  CHECK(lvl["requested_rate"] == 40.0);
  CHECK(lvl["realized_rate"].get<double>() > 0);
  CHECK(lvl["max_concurrency"] == 1);
  CHECK(lvl["total_input_tokens"] == 64);
  CHECK(open.out.find("rate=40: realized arrival rate") != std::string::npos);
  CHECK(open.record["suites"]["load"]["metrics"].contains("rate=40/total_tok_s"));

  // Load flags with suites that do not read them are usage errors naming the flag and the suite
  // (they were silently ignored); so are endpoint options without --endpoint.
  const atlas::test::ShellResult ignored =
      atlas::test::run_shell("'" + std::string(bench_env) + "' run" + model + " --endpoint " + server.url +
                             " --suite ttft --concurrency 1,2 --num-prompts 3 --no-store 2>&1");
  CHECK(ignored.rc == 3);
  CHECK(ignored.out.find("--suite ttft does not run the load suite, so --concurrency, --num-prompts would be ignored") !=
        std::string::npos);
  const atlas::test::ShellResult no_endpoint =
      atlas::test::run_shell("'" + std::string(bench_env) + "' run" + model + " --suite ttft --context-length 256 --no-store 2>&1");
  CHECK(no_endpoint.rc == 3);
  CHECK(no_endpoint.out.find("--context-length: endpoint options, but no --endpoint URL") != std::string::npos);

  const atlas::test::ShellResult no_server =
      atlas::test::run_shell("'" + std::string(bench_env) + "' run" + model + " --concurrency 2 --no-store 2>&1");
  CHECK(no_server.rc == 3);
  CHECK(no_server.out.find("--suite load drives a server: give --endpoint URL") != std::string::npos);
  const atlas::test::ShellResult bad =
      atlas::test::run_shell("'" + std::string(bench_env) + "' run" + model + " --endpoint " + server.url + " --rate 2,x --no-store 2>&1");
  CHECK(bad.rc == 3);
  CHECK(bad.out.find("--rate: 'x' is not a number > 0") != std::string::npos);
}

TEST_CASE("atlas-bench run: flags the run would ignore are usage errors naming the flags (no server contacted)") {
  const std::string bench_env = atlas::test::bench_exe_or_skip();
  if (bench_env.empty()) return;
  atlas::test::require_data(atlas::test::stories_bin());
  const std::string run = std::string("'") + bench_env + "' run --model '" + atlas::test::stories_bin().string() +
                          "' --tokenizer '" + atlas::test::stories_tok().string() + "' --no-store";
  // Port 9 (discard): every check below comes before any request.
  const std::string endpoint = " --endpoint http://127.0.0.1:9/v1";
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      // The load suite sends --num-prompts requests per level once: no warmup, no repetitions.
      {" --concurrency 1 --num-prompts 2 --repetitions 5 --warmup 3",
       "--warmup, --repetitions: no suite of this run (load) repeats its measurements, so they would be ignored"},
      {" --concurrency 1 --num-prompts 2 --warmup 3", "--warmup: no suite of this run (load) repeats its measurements"},
      // bfcl scores each entry once.
      {" --suite bfcl,load --concurrency 1 --repetitions 2",
       "--repetitions: no suite of this run (bfcl,load) repeats its measurements, so they would be ignored"},
      // A closed loop never draws arrival gaps.
      {" --concurrency 1 --num-prompts 2 --burstiness 0.2",
       "--burstiness shapes the arrival gaps of an open loop (--rate); this load run is a closed loop (--concurrency), which never uses it"},
      // Both loops at once: the flags conflict (it was reported as coming from suites/config/pr.json).
      {" --concurrency 1 --rate 2",
       "--concurrency and --rate: give one; a load run is either a closed loop (--concurrency: requests in flight) or an open loop"},
      // The server runs the model: the in-process engine's options would be ignored.
      {" --suite ttft --backend cuda --threads 7", "--backend, --threads: options of the in-process engine; with --endpoint"},
      {" --suite ttft --threads 7", "--threads: options of the in-process engine; with --endpoint"},
      // instructions counts the in-process engine under callgrind: a usage error, not a run
      // that fails with exit 2.
      {" --suite instructions", "--suite instructions counts the in-process engine's instructions under callgrind; with --endpoint"},
      {" --suite ttft,instructions", "--suite instructions counts the in-process engine's instructions"},
      // A closed loop keeps --concurrency in flight: a cap on it would be ignored.
      {" --concurrency 2 --max-concurrency 1", "--max-concurrency caps the requests in flight of an open loop (--rate)"},
  };
  for (const Case& c : cases) {
    INFO(c.args);
    const atlas::test::ShellResult r = atlas::test::run_shell(run + endpoint + c.args + " 2>&1");
    INFO(r.out);
    CHECK(r.rc == 3);
    CHECK(r.out.find(c.message) != std::string::npos);
    CHECK(r.out.find("pr.json") == std::string::npos);
  }
  // Still allowed: --burstiness with --rate; --warmup with a suite that repeats; the engine's
  // options in process. (Usage is checked before the run: --suite load without a server.)
  const atlas::test::ShellResult open_loop = atlas::test::run_shell(run + " --rate 2 --burstiness 0.2 2>&1");
  CHECK(open_loop.rc == 3);
  CHECK(open_loop.out.find("--suite load drives a server: give --endpoint URL") != std::string::npos);
}
