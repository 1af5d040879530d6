// SIGTERM / SIGINT to a program that runs child processes: the whole child tree stops, the
// registered temporary folders are removed, the exit status is 128 + the signal.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/process.hpp"
#include "common/termination.hpp"
#include "tests/test_data.hpp"

namespace fs = std::filesystem;

namespace {

/// True when `pid` no longer runs (gone, or a zombie waiting for its parent).
bool stopped(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  return state == "Z" || state == "X";
}

/// Runs a child that installs the handlers, registers `tmp` and runs a shell whose background
/// `sleep` (a grandchild) writes its pid to `pid_file`; sends `sig` once the sleep runs. Returns
/// the child's wait status and the sleep's pid.
std::pair<int, pid_t> interrupt_a_child_tree(int sig, const fs::path& tmp, const fs::path& pid_file) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    atlas::termination::install();
    fs::create_directories(tmp / "inner");
    std::ofstream(tmp / "inner" / "side.json") << "{}";
    const atlas::termination::TempPath guard(tmp);
    const std::string script = "sleep 60 & echo $! > '" + pid_file.string() + "'; wait";
    (void)atlas::run_process({"sh", "-c", script}, {});
    ::_exit(0);  // reached only when the shell ended without the signal
  }
  pid_t sleeper = 0;
  for (int i = 0; i < 400 && sleeper == 0; ++i) {
    std::ifstream in(pid_file);
    if (!(in >> sleeper)) sleeper = 0;
    if (sleeper == 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  REQUIRE(sleeper > 0);
  ::kill(child, sig);
  int status = 0;
  pid_t got = 0;
  for (int i = 0; i < 400 && got == 0; ++i) {
    got = ::waitpid(child, &status, WNOHANG);
    if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  if (got == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    ::kill(sleeper, SIGKILL);
    FAIL("the process did not exit within 10 s of the signal");
  }
  return {status, sleeper};
}

}  // namespace

TEST_CASE("SIGTERM: the child's whole process group stops, temporary folders go, exit 143") {
  const auto dir = atlas::test::scratch_dir("termination_term");
  const auto tmp = dir / "atlas-gate-timed-x";
  const auto [status, sleeper] = interrupt_a_child_tree(SIGTERM, tmp, dir / "sleep.pid");
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = stopped(sleeper);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK_MESSAGE(gone, "the grandchild sleep " << sleeper << " still runs");
  if (!gone) ::kill(sleeper, SIGKILL);
  CHECK_FALSE(fs::exists(tmp));
}

TEST_CASE("SIGINT: the same, exit 130") {
  const auto dir = atlas::test::scratch_dir("termination_int");
  const auto tmp = dir / "atlas-callgrind-x";
  const auto [status, sleeper] = interrupt_a_child_tree(SIGINT, tmp, dir / "sleep.pid");
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  // sh puts a background job of a non-interactive shell on SIGINT-ignore; the SIGKILL after the
  // grace period stops it.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = stopped(sleeper);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK_MESSAGE(gone, "the grandchild sleep " << sleeper << " still runs");
  if (!gone) ::kill(sleeper, SIGKILL);
  CHECK_FALSE(fs::exists(tmp));
}
