// CLI level: start the atlas-serve binary on a free loopback port, stream a completion with
// libcurl, stop it with SIGTERM and check it exits 0 after draining. The binary comes from
// $ATLAS_SERVE_EXE (set by tests/CMakeLists.txt).
#if ATLAS_HAVE_CURL && ATLAS_HAVE_HTTPLIB

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "suites/endpoint/endpoint_target.hpp"
#include "tests/test_data.hpp"

extern char** environ;

namespace {
/// A child process with its stdout on a pipe; killed (SIGKILL) if still running at the end.
struct Child {
  pid_t pid = -1;
  int out = -1;
  std::string captured;

  Child(const std::vector<std::string>& argv) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    REQUIRE(posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    out = fds[0];
  }
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (out >= 0) ::close(out);
  }
  /// Reads stdout until `needle` appears or `timeout_ms` passes.
  bool read_until(const std::string& needle, int timeout_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (captured.find(needle) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now()).count();
      if (left <= 0) return false;
      pollfd p{out, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
      char buf[4096];
      const ssize_t n = ::read(out, buf, sizeof buf);
      if (n <= 0) return captured.find(needle) != std::string::npos;
      captured.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }
  /// Waits for exit; returns the exit status, or -1 on timeout or signal death.
  int wait_exit(int timeout_ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      const pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      ::usleep(10000);
    }
    return -1;
  }
};
}  // namespace

TEST_CASE("atlas-serve binary: serves stories260K on loopback, streams, drains and exits 0 on SIGTERM") {
  const char* exe = std::getenv("ATLAS_SERVE_EXE");
  if (!exe || !*exe) {
    MESSAGE("skipped: ATLAS_SERVE_EXE is not set (run through ctest)");
    return;
  }
  if (!std::filesystem::exists(atlas::test::stories_bin())) {
    MESSAGE("skipped: " << atlas::test::stories_bin() << " not found");
    return;
  }
  Child server({exe, "--model", atlas::test::stories_bin().string(), "--tokenizer", atlas::test::stories_tok().string(),
                "--host", "127.0.0.1", "--port", "0", "--served-model-name", "stories", "--queue-limit", "2", "--threads", "1"});
  REQUIRE(server.read_until("/v1 (model", 30000));
  const auto at = server.captured.find("http://127.0.0.1:");
  REQUIRE(at != std::string::npos);
  const std::string url = server.captured.substr(at, server.captured.find(" (model", at) - at);
  CHECK(url.ends_with("/v1"));
  {
    atlas::suites::endpoint::EndpointOptions o;
    o.url = url;
    atlas::suites::endpoint::EndpointTarget target(o);
    CHECK(target.served_model() == "stories");
    atlas::suites::TargetRequest req;
    req.prompt_text = "Once upon a time";
    req.max_new_tokens = 16;
    req.ignore_eos = true;
    const auto r = target.generate(req);
    REQUIRE(r.ok);
    CHECK(r.completion_tokens == 16);
    CHECK(r.token_t_ns.size() >= 1);
    CHECK(!r.text.empty());
  }
  REQUIRE(::kill(server.pid, SIGTERM) == 0);
  CHECK(server.wait_exit(20000) == 0);
  server.read_until("stopped", 2000);
  CHECK(server.captured.find("SIGTERM: draining") != std::string::npos);
  CHECK(server.captured.find("stopped (1 completed") != std::string::npos);
}

TEST_CASE("atlas-serve binary: a bad model path exits 3 with the path in the message") {
  const char* exe = std::getenv("ATLAS_SERVE_EXE");
  if (!exe || !*exe) {
    MESSAGE("skipped: ATLAS_SERVE_EXE is not set (run through ctest)");
    return;
  }
  Child bad({exe, "--model", "/nonexistent/model.bin", "--port", "0"});
  CHECK(bad.wait_exit(20000) == 3);
}

#endif
