#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/machine_error.hpp"
#include "common/sha256.hpp"
#include "tests/rlimit.hpp"
#include "tests/test_data.hpp"

TEST_CASE("sha256 matches FIPS 180-4 test vectors") {
  // Vectors from FIPS 180-4 examples (NIST CSRC "SHA256.pdf").
  CHECK(atlas::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(atlas::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST_CASE("write_file_atomic replaces content and leaves no temp files") {
  const auto dir = atlas::test::scratch_dir("atomic_replace");
  const auto p = dir / "a.json";
  atlas::write_file_atomic(p, "one");
  atlas::write_file_atomic(p, "two");
  CHECK(atlas::read_file(p) == "two");
  int n = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir)) ++n;
  CHECK(n == 1);
}

TEST_CASE("errno_is_machine_failure: a wrong path is the input's error, a failing machine is not") {
  for (int e : {ENOENT, ENOTDIR, EISDIR, EACCES, EPERM, EROFS, EEXIST, ENAMETOOLONG, ELOOP, EINVAL, ENOTEMPTY, ETXTBSY,
                ENXIO, ENODEV})
    CHECK_FALSE(atlas::errno_is_machine_failure(e));
  for (int e : {EIO, ENOSPC, EDQUOT, EFBIG, EMFILE, ENFILE, ENOMEM, EBADF}) CHECK(atlas::errno_is_machine_failure(e));
  CHECK_THROWS_AS(atlas::throw_errno_error("cannot write x", ENOSPC), atlas::MachineError);
  CHECK_THROWS_WITH(atlas::throw_errno_error("cannot write x", ENOSPC), "cannot write x: No space left on device");
  CHECK_THROWS_AS(atlas::throw_errno_error("cannot create x", ENOENT), atlas::InputError);
}

using atlas::test::with_rlimit;

// The machine's failures (a full disk, a file-size limit, no descriptor left) are MachineErrors,
// exit 4; a path the user named wrongly stays an InputError, exit 3 (README, "Exit codes").
TEST_CASE("write_file_atomic: a failing machine throws MachineError naming the file and errno; a wrong path InputError") {
  const auto dir = atlas::test::scratch_dir("atomic_machine_error");
  const auto p = dir / "record.json";
  const std::string big(64 * 1024, 'x');

  // A write past RLIMIT_FSIZE fails with EFBIG (SIGXFSZ ignored), as a full disk fails with ENOSPC.
  const auto old_xfsz = std::signal(SIGXFSZ, SIG_IGN);
  std::string what;
  with_rlimit(RLIMIT_FSIZE, 1024, [&] {
    try {
      atlas::write_file_atomic(p, big);
    } catch (const atlas::MachineError& e) {
      what = e.what();
    }
  });
  std::signal(SIGXFSZ, old_xfsz);
  INFO(what);
  CHECK(what.starts_with("cannot write "));
  CHECK(what.find("record.json") != std::string::npos);  // the temporary file for it (O_TMPFILE) or its named one
  CHECK(what.find(std::strerror(EFBIG)) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(p));

  // No descriptor left (EMFILE): the machine's failure too.
  what.clear();
  with_rlimit(RLIMIT_NOFILE, 0, [&] {
    try {
      atlas::write_file_atomic_new(p, "{}");
    } catch (const atlas::MachineError& e) {
      what = e.what();
    }
  });
  INFO(what);
  CHECK(what.find("cannot create " + (dir / ".record.json.tmp.").string()) != std::string::npos);
  CHECK(what.find(std::strerror(EMFILE)) != std::string::npos);

  // A parent that is a file (ENOTDIR / EEXIST): the user named a wrong path.
  std::ofstream(dir / "a-file") << "x";
  try {
    atlas::write_file_atomic(dir / "a-file" / "record.json", "{}");
    FAIL("no error");
  } catch (const atlas::MachineError& e) {
    FAIL("a wrong path is not the machine's failure: " << e.what());
  } catch (const atlas::InputError& e) {
    CHECK(std::string(e.what()).find("cannot create directory " + (dir / "a-file").string()) != std::string::npos);
  }
}

TEST_CASE("write_file_atomic_new never overwrites") {
  const auto dir = atlas::test::scratch_dir("atomic_new");
  const auto p = dir / "r.json";
  atlas::write_file_atomic_new(p, "first");
  CHECK_THROWS_AS(atlas::write_file_atomic_new(p, "second"), atlas::Error);
  CHECK(atlas::read_file(p) == "first");
}

TEST_CASE("a writer killed mid-write leaves the old file whole and no partial target") {
  const auto dir = atlas::test::scratch_dir("atomic_kill");
  const auto p = dir / "baseline.json";
  atlas::write_file_atomic(p, "old-content");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Child: write a large payload forever; the parent kills it part-way.
    const std::string big(64 << 20, 'x');
    for (;;) atlas::write_file_atomic(p, big);
  }
  ::usleep(50 * 1000);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::string now = atlas::read_file(p);
  // Either the old content or a complete new payload, never a prefix.
  const bool whole = now == "old-content" || (now.size() == (64u << 20) && now.find_first_not_of('x') == std::string::npos);
  CHECK(whole);
  // And no temporary file: it has no name while it is written (O_TMPFILE).
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  CHECK(names == std::vector<std::string>{"baseline.json"});
}

TEST_CASE("write_file_atomic_new killed by SIGKILL mid-write leaves only whole records, no temporary file") {
  // A killed `records merge` once left a 300 MB temp file beside the store.
  const auto dir = atlas::test::scratch_dir("atomic_new_kill");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string big(64 << 20, 'x');
    for (int i = 0;; ++i) {
      std::string name = "r";  // built piece by piece: GCC 12's -Wrestrict misfires on a chained operator+
      name += std::to_string(i);
      name += ".json";
      atlas::write_file_atomic_new(dir / name, big);
    }
  }
  ::usleep(150 * 1000);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    CAPTURE(name);
    CHECK(name.front() != '.');  // ".r3.json.tmp.<pid>.<n>" before O_TMPFILE
    CHECK(std::filesystem::file_size(e.path()) == (64u << 20));
  }
}
