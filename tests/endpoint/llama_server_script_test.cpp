// tools/llama-server-e2e.sh without a llama-server: a stand-in binary that records its
// arguments shows what the script would start llama.cpp with, and `--check` judges records made
// here, so the set-ups the script was run with elsewhere (one slot, no prompt cache) stay right
// where CI cannot build llama.cpp.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "common/build_paths.hpp"
#include "common/process.hpp"
#include "common/temp_dir.hpp"
#include "tests/skip.hpp"
#include "tests/test_data.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string script() { return std::string(atlas::build_source_dir()) + "/tools/llama-server-e2e.sh"; }

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p);
  out << text;
  REQUIRE(out.good());
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A loopback port nobody listens on now (bound to 0, then released): the script polls /health
/// there, which must not reach some other server.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// The records a run against a server without a prompt cache leaves: cold requests cold, the
/// warm request and the second agentic turn reuse nothing (as the server's cache_n says), and
/// the agentic suite charges that turn's whole expected reuse (179 tokens) as shortfall.
/// `warm_cached` > 0 makes the warm request reused instead (a server with a cache).
json suites_record(int warm_cached) {
  json r = json::parse(R"({"suites": {
    "ttft": {"details": {"requests": [
      {"variant": "cold", "len": 64, "ttft_ms": 31.0, "cached_tokens": 0, "server_timings": {"prompt_ms": 30.0, "cache_n": 0}},
      {"variant": "warm", "len": 64, "ttft_ms": 2.0, "cached_tokens": 0, "reused": false, "server_timings": {"prompt_ms": 1.5, "cache_n": 0}}]}},
    "agentic": {"metrics": {"reuse_shortfall_tokens": {"samples": [179]}},
                "details": {"turns_without_exact_expectation": 0,
                            "traces": {"coding-agent": {"turns": [
                              {"turn": 1, "expected_reused": 0, "reused": 0, "expected_exact": true, "server_timings": {"cache_n": 0}},
                              {"turn": 2, "expected_reused": 179, "reused": 0, "expected_exact": true, "server_timings": {"cache_n": 0}}]}},
                            "reuse_shortfalls": [{"trace": "coding-agent", "repetition": 1, "turn": 2, "expected_reused": 179, "reused": 0}]}},
    "bfcl": {"metrics": {"entries_failed": {"samples": [0]}},
             "details": {"cold_salted_requests": 0, "cold_timed_separately": 0, "cold_reissued": 0,
                         "entries": [{"valid": true, "cached_tokens": 0, "server_timings": {"cache_n": 0}, "timed": "scored request"}]}}}})");
  json& warm = r["suites"]["ttft"]["details"]["requests"][1];
  warm["cached_tokens"] = warm_cached;
  warm["reused"] = warm_cached > 0;
  warm["server_timings"]["cache_n"] = warm_cached;
  return r;
}

json load_record() {
  json levels = json::array();
  for (const char* level : {"concurrency=1", "concurrency=2", "concurrency=4"}) {
    json l = json::parse(R"({"completed": 12, "request_throughput": 40.0, "output_tok_s": 1200.0, "ttft_ms": {"p50": 2.0},
                             "tpot_ms": {"p50": 0.5}, "server": {"tpot_ms": {"p50": 0.51}}, "send_lag_ms": {"p99": 0.1}, "valid": true})");
    l["level"] = level;
    levels.push_back(l);
  }
  json r;
  r["suites"]["load"]["details"]["levels"] = levels;
  return r;
}

/// An output folder as a run leaves it: the two records, the files naming them, the options.
void kept_run(const fs::path& out, const json& suites, const std::string& server_args) {
  fs::create_directories(out);
  write(out / "suites-record.json", suites.dump());
  write(out / "load-record.json", load_record().dump());
  write(out / "suites.record", (out / "suites-record.json").string() + "\n");
  write(out / "load.record", (out / "load-record.json").string() + "\n");
  write(out / "server-args.txt", server_args);
}

atlas::ProcessResult check(const fs::path& out) { return atlas::run_process_with({"bash", script(), "--check", out.string()}, {}); }

bool has_jq() { return atlas::run_process_with({"jq", "--version"}, {}).exit_status == 0; }

}  // namespace

TEST_CASE("llama-server-e2e.sh passes E2E_SERVER_ARGS, then the words after --, to llama-server as given") {
  atlas::TempDir dir("atlas-llama-e2e-");
  const fs::path args = dir.path() / "args";
  const fs::path fake = dir.path() / "llama-server";
  // Records each call's arguments one per line, then stops, as a server that fails to start.
  write(fake, "#!/bin/sh\nprintf '%s\\n' \"$@\" >> \"$FAKE_ARGS\"; echo -- >> \"$FAKE_ARGS\"\n"
              "[ \"$1\" = --version ] && exit 0\necho 'fake: stopping'; exit 1\n");
  fs::permissions(fake, fs::perms::owner_all);
  const fs::path out = dir.path() / "out";
  const int port = free_port();
  atlas::ProcessOptions o;
  o.env_overrides = {{"FAKE_ARGS", args.string()},
                     {"E2E_OUT", out.string()},
                     {"E2E_PORT", std::to_string(port)},
                     {"E2E_SERVER_ARGS", "--no-cache-prompt  -c 512"}};
  // ATLAS_BENCH is never run: the server stops before any suite.
  const auto r = atlas::run_process_with({"bash", script(), fake.string(), "/bin/true", atlas::test::data_dir().string(), "--",
                                          "-np", "1", "--cache-ram", "0", "--alias", "a b"},
                                         o);
  INFO(r.out << r.err);
  if (r.err.find("needs jq") != std::string::npos) ATLAS_SKIP("jq is not installed (Debian package jq)");
  CHECK(r.exit_status == 4);  // a server that does not start: the machine's or the program's failure, not a check's
  CHECK(r.err.find("llama-server exited") != std::string::npos);
  CHECK(r.out.find("prompt cache off") != std::string::npos);
  const std::string model = (atlas::test::data_dir() / "models/stories260K-gguf/stories260K.gguf").string();
  CHECK(read(args) == "--version\n--\n-m\n" + model + "\n--host\n127.0.0.1\n--port\n" + std::to_string(port) +
                          "\n--jinja\n-t\n1\n--no-cache-prompt\n-c\n512\n-np\n1\n--cache-ram\n0\n--alias\na b\n--\n");
  // Saved for --check, one word a line.
  CHECK(read(out / "server-args.txt") == "--no-cache-prompt\n-c\n512\n-np\n1\n--cache-ram\n0\n--alias\na b\n");
}

TEST_CASE("llama-server-e2e.sh: too many arguments, a DATA_DIR that is no folder or a missing LLAMA_SERVER exits 3 naming it") {
  atlas::TempDir dir("atlas-llama-e2e-");
  atlas::ProcessOptions o;
  o.env_overrides = {{"E2E_OUT", (dir.path() / "out").string()}};
  const auto many = atlas::run_process_with({"bash", script(), "a", "b", "c", "d"}, o);
  CHECK(many.exit_status == 3);
  CHECK(many.err.find("4 arguments before --") != std::string::npos);

  const auto no_data = atlas::run_process_with({"bash", script(), "/bin/true", "/bin/true", (dir.path() / "no-data").string()}, o);
  INFO(no_data.err);
  CHECK(no_data.exit_status == 3);
  CHECK(no_data.err.find("DATA_DIR " + (dir.path() / "no-data").string() + ": not a folder") != std::string::npos);

  const std::string missing = (dir.path() / "no-llama-server").string();
  const auto r = atlas::run_process_with({"bash", script(), missing, "/bin/true", atlas::test::data_dir().string()}, o);
  INFO(r.err);
  if (r.err.find("needs jq") != std::string::npos) ATLAS_SKIP("jq is not installed (Debian package jq)");
  CHECK(r.exit_status == 3);
  CHECK(r.err.find("not found: " + missing) != std::string::npos);
}

TEST_CASE("llama-server-e2e.sh --check: without a prompt cache the reuse checks expect no reuse, and only then") {
  if (!has_jq()) ATLAS_SKIP("jq is not installed (Debian package jq)");
  atlas::TempDir dir("atlas-llama-e2e-");

  SUBCASE("a run with --no-cache-prompt that reused nothing passes, its shortfall the expected reuse") {
    kept_run(dir.path() / "a", suites_record(0), "-np\n1\n--no-cache-prompt\n");
    const auto r = check(dir.path() / "a");
    INFO(r.out << r.err);
    CHECK(r.exit_status == 0);
    CHECK(r.out.find("prompt cache off") != std::string::npos);
    CHECK(r.out.find("ok   no prompt cache: each later turn's whole expected reuse is charged as shortfall") != std::string::npos);
    CHECK(r.out.find("FAIL") == std::string::npos);
  }
  SUBCASE("the same records from a server started with its cache fail the shortfall check") {
    kept_run(dir.path() / "b", suites_record(0), "-np\n1\n--cache-ram\n0\n");
    const auto r = check(dir.path() / "b");
    INFO(r.out << r.err);
    CHECK(r.exit_status == 1);
    CHECK(r.out.find("prompt cache on") != std::string::npos);
    CHECK(r.out.find("FAIL agentic: reuse shortfall 0") != std::string::npos);
  }
  SUBCASE("without a prompt cache a reused warm request fails") {
    kept_run(dir.path() / "c", suites_record(63), "--no-cache-prompt\n");
    const auto r = check(dir.path() / "c");
    INFO(r.out << r.err);
    CHECK(r.exit_status == 1);
    CHECK(r.out.find("FAIL no prompt cache: every warm request reused 0") != std::string::npos);
  }
  SUBCASE("a folder no run left is a usage error naming it") {
    const auto r = check(dir.path() / "none");
    CHECK(r.exit_status == 3);  // README, "Exit codes": 2 would read as the gates' inconclusive
    CHECK(r.err.find((dir.path() / "none").string() + ": no server-args.txt") != std::string::npos);
  }
}
