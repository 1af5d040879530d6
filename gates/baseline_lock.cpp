#include "gates/baseline_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "common/machine_error.hpp"
#include "gates/error.hpp"

namespace atlas::gates {

BaselineLock::BaselineLock(const std::filesystem::path& baseline_file) {
  std::filesystem::path dir = baseline_file.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) {
    const int err = errno;
    throw_errno_error<GateError>(dir.string() + ": cannot open the BASELINE folder to lock it", err);
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  std::cerr << "atlas-bench: waiting for another baseline command to finish with " << dir.string() << "\n";
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    ::close(fd_);
    throw_errno_error<GateError>(dir.string() + ": cannot lock the BASELINE folder", e);
  }
}

BaselineLock::~BaselineLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace atlas::gates
